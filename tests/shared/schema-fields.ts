import ts from 'typescript';

type Schema = Record<string, unknown>;

/** The schemas that describe one value: the node itself and its anyOf/oneOf/allOf/then/else branches (not `if`, a condition). */
function branches(node: unknown): Schema[] {
  if (typeof node !== 'object' || node === null) return [];
  const schema = node as Schema;
  const nested = ['anyOf', 'oneOf', 'allOf'].flatMap((key) => (Array.isArray(schema[key]) ? (schema[key] as unknown[]) : []));
  return [schema, ...[...nested, schema.then, schema.else].flatMap(branches)];
}

function schemaFields(nodes: Schema[]): Set<string> {
  return new Set(nodes.flatMap((node) => (typeof node.properties === 'object' && node.properties ? Object.keys(node.properties) : [])));
}

function schemaChild(nodes: Schema[], field: string): Schema[] {
  return nodes.flatMap((node) => branches((node.properties as Schema | undefined)?.[field]));
}

function schemaItems(nodes: Schema[]): Schema[] {
  return nodes.flatMap((node) => branches(node.items));
}

/** The object types a value of `type` can be: null, undefined and primitives left out, unions spread. */
function objectsOf(checker: ts.TypeChecker, type: ts.Type): ts.Type[] {
  const members = type.isUnion() ? type.types : [type];
  return members.filter((member) => (member.flags & ts.TypeFlags.Object) !== 0 && !checker.isArrayType(member) && !checker.isTupleType(member));
}

function elementsOf(checker: ts.TypeChecker, type: ts.Type): ts.Type[] {
  const members = type.isUnion() ? type.types : [type];
  return members.filter((member) => checker.isArrayType(member)).map((array) => checker.getTypeArguments(array as ts.TypeReference)[0]!);
}

/**
 * Walks a JSON schema and a TypeScript type side by side and lists every object whose named
 * fields differ, as `path: only in the schema [..], only in the type [..]`. Objects without named
 * fields on either side (open objects, records) make no claim and are not compared.
 */
export function fieldDifferences(checker: ts.TypeChecker, schema: object, type: ts.Type): string[] {
  const out: string[] = [];
  const walk = (nodes: Schema[], types: ts.Type[], path: string) => {
    const objects = types.flatMap((each) => objectsOf(checker, each));
    const typeFields = new Set(objects.flatMap((object) => checker.getPropertiesOfType(object).map((property) => property.name)));
    const fields = schemaFields(nodes);
    if (fields.size > 0 && typeFields.size > 0) {
      const onlySchema = [...fields].filter((field) => !typeFields.has(field)).sort();
      const onlyType = [...typeFields].filter((field) => !fields.has(field)).sort();
      if (onlySchema.length > 0 || onlyType.length > 0)
        out.push(`${path || '(root)'}: only in the schema [${onlySchema.join(', ')}], only in the type [${onlyType.join(', ')}]`);
      for (const field of [...fields].filter((name) => typeFields.has(name))) {
        const fieldTypes = objects.flatMap((object) => {
          const property = checker.getPropertyOfType(object, field);
          return property ? [checker.getNonNullableType(checker.getTypeOfSymbol(property))] : [];
        });
        walk(schemaChild(nodes, field), fieldTypes, path ? `${path}.${field}` : field);
      }
    }
    const items = schemaItems(nodes);
    const elements = types.flatMap((each) => elementsOf(checker, checker.getNonNullableType(each)));
    if (items.length > 0 && elements.length > 0) walk(items, elements, `${path}[]`);
  };
  walk(branches(schema), [type], '');
  return out;
}

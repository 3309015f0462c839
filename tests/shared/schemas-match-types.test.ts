import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../companion/src/config/schema.js';
import { REPO_ROOT } from '../helpers/hearth-process.js';
import { fieldDifferences } from './schema-fields.js';
import { exportedType, program, sharedFile } from './typescript.js';

/*
 * Every request body the routes take (JSON bodies, and multipart forms' text fields) and the
 * configuration document name exactly the fields of the shared/ wire types they validate, at
 * every depth: a field added, renamed or removed on one side only fails here. The bodies are
 * found in the route modules themselves: each `export const x = {...} as const satisfies
 * BodySchema<Wire>` is one, and every `schema: { body }` and `readForm(..., { body })` must use
 * one of them. The field lists come from the types through the TypeScript compiler.
 */

const ROUTES = join(REPO_ROOT, 'companion', 'src', 'routes');
const SHARED = join(REPO_ROOT, 'shared', 'src');

function sourcesUnder(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourcesUnder(join(folder, entry.name)) : entry.name.endsWith('.ts') ? [join(folder, entry.name)] : [],
  );
}

const files = sourcesUnder(ROUTES);
const built = program([...files, sharedFile('config.ts')]);
const checker = built.getTypeChecker();

interface Declared {
  /** `routes/<file>: <name>`. */
  where: string;
  declaration: ts.VariableDeclaration;
  wire: ts.Type;
  /** How the wire type is written, and where its parts are declared. */
  wireText: string;
  schema: object;
}

/** Every exported `const name = ... satisfies BodySchema<Wire>` of the route modules. */
async function declaredBodies(): Promise<Declared[]> {
  const found: Declared[] = [];
  for (const file of files) {
    const source = built.getSourceFile(file)!;
    const module = (await import(file)) as Record<string, object>;
    const visit = (node: ts.Node): void => {
      if (ts.isVariableDeclaration(node) && node.initializer && ts.isSatisfiesExpression(node.initializer)) {
        const target = node.initializer.type;
        if (ts.isTypeReferenceNode(target) && target.typeName.getText(source) === 'BodySchema' && target.typeArguments?.length === 1) {
          const name = node.name.getText(source);
          const argument = target.typeArguments[0]!;
          found.push({
            where: `routes/${relative(ROUTES, file)}: ${name}`,
            declaration: node,
            wire: checker.getTypeFromTypeNode(argument),
            wireText: argument.getText(source),
            schema: module[name]!,
          });
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

/** Every schema a route uses for a body: `schema: { body: x }` in route options, `body: x` in readForm's rules. */
function usedBodies(): { where: string; expression: ts.Expression }[] {
  const used: { where: string; expression: ts.Expression }[] = [];
  for (const file of files) {
    const source = built.getSourceFile(file)!;
    const visit = (node: ts.Node): void => {
      if (ts.isPropertyAssignment(node) && node.name.getText(source) === 'body' && ts.isObjectLiteralExpression(node.parent)) {
        const holder = node.parent.parent;
        const inSchema = ts.isPropertyAssignment(holder) && holder.name.getText(source) === 'schema';
        const inForm = ts.isCallExpression(holder) && holder.expression.getText(source) === 'readForm';
        if (inSchema || inForm) {
          const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
          used.push({ where: `routes/${relative(ROUTES, file)}:${line + 1}`, expression: node.initializer });
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return used;
}

/** The declaration an identifier names, through imports. */
function declarationOf(expression: ts.Expression): ts.Declaration | undefined {
  if (!ts.isIdentifier(expression)) return undefined;
  let symbol = checker.getSymbolAtLocation(expression);
  if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
  return symbol?.valueDeclaration;
}

/** Where the object types of a wire type are declared (null and undefined left out). */
function declaredIn(type: ts.Type): string[] {
  const members = type.isUnion() ? type.types : [type];
  return members
    .filter((member) => !(member.flags & (ts.TypeFlags.Null | ts.TypeFlags.Undefined)))
    .flatMap((member) => (member.aliasSymbol ?? member.getSymbol())?.declarations ?? [])
    .map((declaration) => relative(REPO_ROOT, declaration.getSourceFile().fileName));
}

const bodies = await declaredBodies();

describe('request bodies and shared types name the same fields', () => {
  it.each(bodies.map((body) => [body.where, body] as const))('%s', (_where, body) => {
    expect(fieldDifferences(checker, body.schema, body.wire)).toEqual([]);
  });

  it('config.yaml', () => {
    expect(fieldDifferences(checker, configSchema, exportedType(built, sharedFile('config.ts'), 'ConfigDocument'))).toEqual([]);
  });

  it('every body a route takes is declared for a wire type from shared/', () => {
    const declarations = new Set<ts.Declaration>(bodies.map((body) => body.declaration));
    const undeclared = usedBodies()
      .filter((use) => !declarations.has(declarationOf(use.expression)!))
      .map((use) => `${use.where}: ${use.expression.getText()}`);
    expect(undeclared).toEqual([]);
    const elsewhere = bodies.filter((body) => declaredIn(body.wire).some((file) => !join(REPO_ROOT, file).startsWith(SHARED)));
    expect(elsewhere.map((body) => `${body.where}: ${body.wireText} (${declaredIn(body.wire).join(', ')})`)).toEqual([]);
  });

  it('a field on one side only is reported with its path', () => {
    const schema = { type: 'object', properties: { model: {}, messages: { type: 'array', items: { properties: { role: {}, mood: {} } } } } };
    const chat = exportedType(built, sharedFile('openai.ts'), 'ChatCompletionRequest');
    const differences = fieldDifferences(checker, schema, chat);
    expect(differences[0]).toMatch(/^\(root\): only in the schema \[\], only in the type \[.*frequency_penalty.*\]$/);
    expect(differences[1]).toBe('messages[]: only in the schema [mood], only in the type [content, name, reasoning_content, tool_call_id, tool_calls]');
  });
});

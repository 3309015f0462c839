/**
 * The `$ref`s of a converted schema, checked before node-llama-cpp builds a grammar from it: a
 * definition that refers to itself before anything is written (left recursion, which llama.cpp's
 * grammar parser refuses with a 500), and an answer that could never end because a definition it
 * must contain always contains itself again (node-llama-cpp writes every property of an object).
 */

type Node = Record<string, unknown>;

export interface References {
  /** Every definition, converted, by its path in the client's schema. */
  definitions: Map<string, Node>;
  /** Each converted `$ref` node, and what it names. */
  targets: WeakMap<object, Reference>;
}

export interface Reference {
  /** The path of the definition it names. */
  target: string;
  name: string;
  /** Where the `$ref` is. */
  path: string;
}

type Refuse = (path: string, problem: string) => never;

export function checkReferences(root: Node, references: References, refuse: Refuse): void {
  refuseLeftRecursion(references, refuse);
  refuseEndless(root, references, refuse);
}

/** The `$ref`s a node may begin with: its own, or those its alternatives begin with (objects and arrays begin with a bracket). */
function leading(node: Node, references: References): Reference[] {
  const reference = references.targets.get(node);
  if (reference) return [reference];
  if (Array.isArray(node.oneOf)) return (node.oneOf as Node[]).flatMap((alternative) => leading(alternative, references));
  return [];
}

function refuseLeftRecursion(references: References, refuse: Refuse): void {
  const done = new Set<string>();
  const visit = (definition: string, open: Set<string>) => {
    if (done.has(definition)) return;
    open.add(definition);
    for (const { target, name, path } of leading(references.definitions.get(definition)!, references)) {
      if (open.has(target)) refuse(path, `makes "${name}" refer to itself before anything is written, which no grammar can hold`);
      visit(target, open);
    }
    open.delete(definition);
    done.add(definition);
  };
  for (const definition of references.definitions.keys()) visit(definition, new Set());
}

/** Refuses a schema whose every answer would contain some definition inside itself without end. */
function refuseEndless(root: Node, references: References, refuse: Refuse): void {
  const finite = new Set<string>();
  let blame: Reference | undefined;
  const ends = (node: Node): boolean => {
    const reference = references.targets.get(node);
    if (reference) {
      if (!finite.has(reference.target)) blame ??= reference;
      return finite.has(reference.target);
    }
    if (Array.isArray(node.oneOf)) return (node.oneOf as Node[]).some(ends);
    if ('const' in node || 'enum' in node) return true;
    if (node.type === 'object') return Object.values((node.properties ?? {}) as Record<string, Node>).every(ends);
    if (node.type === 'array') {
      const prefix = (node.prefixItems ?? []) as Node[];
      const items = node.items as Node | undefined;
      return prefix.every(ends) && (items === undefined || Number(node.minItems ?? 0) <= prefix.length || ends(items));
    }
    return true;
  };
  // The definitions that can end, found until no more are: those whose references all can.
  for (let grew = true; grew;) {
    grew = false;
    for (const [definition, node] of references.definitions) {
      if (!finite.has(definition) && ends(node)) {
        finite.add(definition);
        grew = true;
      }
    }
  }
  blame = undefined;
  if (!ends(root) && blame) {
    const { name, path } = blame as Reference;
    refuse(path, `names "${name}", which always contains itself again, so no answer could ever end`);
  }
}

/** Deepest nesting of tool arguments accepted (the arguments object itself is level 1). */
export const MAX_ARGUMENT_DEPTH = 64;
/** Most values (objects, arrays and scalars together) in one call's arguments. */
export const MAX_ARGUMENT_VALUES = 100_000;

/**
 * Why a call's arguments cannot be sent, or undefined: nested too deep (10,000 levels overflow
 * the stack of whatever walks them next: the schema check, the serialiser), too many values, or
 * values JSON cannot carry. Walked without recursion, so the check itself cannot overflow.
 */
export function argumentsProblem(args: unknown): string | undefined {
  const pending: [unknown, number][] = [[args, 1]];
  let values = 0;
  while (pending.length > 0) {
    const [value, depth] = pending.pop()!;
    values += 1;
    if (values > MAX_ARGUMENT_VALUES) return `The arguments hold more than ${MAX_ARGUMENT_VALUES} values.`;
    if (typeof value === 'bigint' || typeof value === 'function' || typeof value === 'symbol')
      return `The arguments hold a ${typeof value}, which JSON cannot carry.`;
    if (value === null || typeof value !== 'object') continue;
    if (depth > MAX_ARGUMENT_DEPTH) return `The arguments are nested more than ${MAX_ARGUMENT_DEPTH} levels deep.`;
    for (const item of Array.isArray(value) ? value : Object.values(value)) pending.push([item, depth + 1]);
  }
  return undefined;
}

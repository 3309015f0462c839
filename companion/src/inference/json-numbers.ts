/**
 * The exponent of a number in node-llama-cpp's JSON grammars, bounded. Its grammars let a number
 * carry up to 16 exponent digits (`1e9590132717135313`), which JSON.parse reads as Infinity (then
 * null) or 0: a tool's arguments or a json_schema answer would not hold the number the model wrote.
 * Two digits keep every number the grammar allows finite (at most 16 digits, a fraction, e99).
 */

/** An exponent as each grammar spells it: the JSON-schema grammars' and json.gbnf's (json_object). */
const EXPONENTS = [' ([eE] [-+]? ("0" | [1-9] [0-9]{0,15}))?', ' ([eE] [-+]? [0-9] [1-9]{0,15})?'];
const BOUNDED = ' ([eE] [-+]? [0-9]{1,2})?';

/** The grammar with every number's exponent limited to two digits. */
export function boundExponents(grammar: string): string {
  return EXPONENTS.reduce((text, exponent) => text.replaceAll(exponent, BOUNDED), grammar);
}

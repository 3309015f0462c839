/** Half of a UTF-16 surrogate pair with no other half: JSON can carry it (`"\ud800"`), but it is no character. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Whether text holds a lone surrogate, which no tokenizer, grammar or UTF-8 encoder can take as it is. */
export function hasLoneSurrogate(text: string): boolean {
  return LONE_SURROGATE.test(text);
}

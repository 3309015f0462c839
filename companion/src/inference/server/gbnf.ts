/** Small operations on GBNF grammar text, for composing node-llama-cpp's JSON grammars into one. */

/** The ending node-llama-cpp's JSON-schema grammars add to their root (four newlines mark the end of the value). */
const JSON_GRAMMAR_END = ' "\\n\\n\\n\\n" [\\n]*';

interface Rule {
  name: string;
  body: string;
}

function parseRules(grammar: string): Rule[] {
  return grammar
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const match = /^([a-zA-Z0-9-]+) ::= (.*)$/.exec(line);
      if (!match) throw new Error(`Unexpected GBNF line: ${line}`);
      return { name: match[1]!, body: match[2]! };
    });
}

/** Replaces rule references outside string literals and character classes. */
function renameReferences(body: string, rename: (name: string) => string | undefined): string {
  let out = '';
  for (let index = 0; index < body.length;) {
    const char = body[index]!;
    if (char === '"' || char === '[') {
      const close = char === '"' ? '"' : ']';
      let end = index + 1;
      while (end < body.length && body[end] !== close) end += body[end] === '\\' ? 2 : 1;
      out += body.slice(index, end + 1);
      index = end + 1;
    } else if (/[a-zA-Z]/.test(char)) {
      const name = /^[a-zA-Z0-9-]+/.exec(body.slice(index))![0];
      out += rename(name) ?? name;
      index += name.length;
    } else {
      out += char;
      index++;
    }
  }
  return out;
}

/**
 * A JSON grammar's rules under a prefix, without the root's end-of-value newlines, so it can be
 * referenced as `<prefix>root` from a larger grammar.
 */
export function embedJsonGrammar(grammar: string, prefix: string): string {
  const rules = parseRules(grammar);
  const names = new Set(rules.map((rule) => rule.name));
  return rules
    .map((rule) => {
      let body = rule.body;
      if (rule.name === 'root') {
        if (!body.endsWith(JSON_GRAMMAR_END)) throw new Error('The JSON grammar does not end the way node-llama-cpp writes it.');
        body = body.slice(0, -JSON_GRAMMAR_END.length);
      }
      return `${prefix}${rule.name} ::= ${renameReferences(body, (name) => (names.has(name) ? `${prefix}${name}` : undefined))}`;
    })
    .join('\n');
}

/** A GBNF string literal matching `text` exactly. */
export function literal(text: string): string {
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t')}"`;
}

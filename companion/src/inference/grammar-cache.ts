import type { GbnfJsonSchema, Llama, LlamaGrammar } from 'node-llama-cpp';
import { boundExponents } from './json-numbers.js';

/**
 * Grammars are compiled once per distinct schema: clients tend to repeat the same one. Every JSON
 * grammar's numbers have bounded exponents (json-numbers.ts), for both engines.
 */
export class GrammarCache {
  private readonly grammars = new Map<string, Promise<LlamaGrammar>>();

  constructor(
    private readonly llama: Llama,
    private readonly limit = 64,
  ) {}

  anyJson(): Promise<LlamaGrammar> {
    return this.remember('json', () => this.llama.getGrammarFor('json'));
  }

  /** A grammar for a schema toGrammarSchema converted (and checked): a json_schema answer's. */
  forSchema(schema: GbnfJsonSchema): Promise<LlamaGrammar> {
    return this.remember(JSON.stringify(schema), () => this.llama.createGrammarForJsonSchema(schema as never));
  }

  /** A grammar for one tool's parameters (converted by toGrammarSchema), for the server engine's tool-call grammar. */
  forParams(schema: GbnfJsonSchema): Promise<LlamaGrammar> {
    return this.forSchema(schema);
  }

  /** A grammar for `{"name": <one of the tools>, "arguments": <its schema>}`. */
  forTools(tools: [name: string, schema: GbnfJsonSchema | undefined][]): Promise<LlamaGrammar> {
    const options = tools.map(([name, schema]) => ({
      type: 'object',
      properties: {
        name: { const: name },
        arguments: schema ?? { type: 'object', additionalProperties: true },
      },
      required: ['name', 'arguments'],
      additionalProperties: false,
    }));
    const schema = options.length === 1 ? options[0]! : { oneOf: options };
    return this.remember(JSON.stringify(schema), () => this.llama.createGrammarForJsonSchema(schema as never));
  }

  private remember(key: string, create: () => Promise<LlamaGrammar>): Promise<LlamaGrammar> {
    let grammar = this.grammars.get(key);
    if (!grammar) {
      if (this.grammars.size >= this.limit) this.grammars.delete(this.grammars.keys().next().value!);
      grammar = create().then((made) => this.bounded(made));
      grammar.catch(() => this.grammars.delete(key));
      this.grammars.set(key, grammar);
    }
    return grammar;
  }

  /** node-llama-cpp's grammar again, with its numbers' exponents bounded (its own settings kept). */
  private bounded(grammar: LlamaGrammar): Promise<LlamaGrammar> | LlamaGrammar {
    const text = boundExponents(grammar.grammar);
    if (text === grammar.grammar) return grammar;
    return this.llama.createGrammar({
      grammar: text,
      stopGenerationTriggers: grammar.stopGenerationTriggers,
      trimWhitespaceSuffix: grammar.trimWhitespaceSuffix,
      rootRuleName: grammar.rootRuleName,
    });
  }
}

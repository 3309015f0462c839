import { dirname, join } from 'node:path';
import ts from 'typescript';
import { REPO_ROOT } from '../helpers/hearth-process.js';

/** The companion's compiler options (tsconfig.companion.json), so `#shared/*` and NodeNext resolve as in the build. */
function options(): ts.CompilerOptions {
  const file = join(REPO_ROOT, 'tsconfig.companion.json');
  const parsed = ts.getParsedCommandLineOfConfigFile(file, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined });
  if (!parsed) throw new Error(`cannot read ${file}`);
  return parsed.options;
}

/** A program over real files plus files that exist only in memory (path → text), as tsc would see them. */
export function program(roots: string[], virtual: Record<string, string> = {}): ts.Program {
  const compilerOptions = options();
  const host = ts.createCompilerHost(compilerOptions);
  const read = host.readFile.bind(host);
  const exists = host.fileExists.bind(host);
  host.readFile = (path) => virtual[path] ?? read(path);
  host.fileExists = (path) => path in virtual || exists(path);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (path, language, ...rest) =>
    path in virtual ? ts.createSourceFile(path, virtual[path]!, language, true) : getSourceFile(path, language, ...rest);
  return ts.createProgram([...roots, ...Object.keys(virtual)], compilerOptions, host);
}

/** tsc's own wording of every problem in one file. */
export function problems(built: ts.Program, file: string): string[] {
  const source = built.getSourceFile(file);
  if (!source) throw new Error(`${file} is not part of the program`);
  return [...built.getSyntacticDiagnostics(source), ...built.getSemanticDiagnostics(source)].map((diagnostic) =>
    ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'),
  );
}

/** The type a module exports under `name`. */
export function exportedType(built: ts.Program, file: string, name: string): ts.Type {
  const checker = built.getTypeChecker();
  const source = built.getSourceFile(file);
  const module = source && checker.getSymbolAtLocation(source);
  const symbol = module && checker.getExportsOfModule(module).find((entry) => entry.name === name);
  if (!symbol) throw new Error(`${file} exports no ${name}`);
  return checker.getDeclaredTypeOfSymbol(symbol);
}

export const sharedFile = (name: string) => join(REPO_ROOT, 'shared', 'src', 'api', name);
export const here = (name: string) => join(dirname(new URL(import.meta.url).pathname), name);

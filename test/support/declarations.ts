/**
 * The declarations the user docs describe, read with the TypeScript compiler: the properties of an
 * interface (inherited ones included) and the string literals of a property's union type. One
 * program serves every caller.
 */
import { join } from 'node:path';
import ts from 'typescript';
import { REPO_ROOT } from './doc-files.js';

/** One program for the source files whose declarations the docs describe. */
const SOURCES = [
  'src/errors.ts',
  'src/finance/types.ts',
  'src/uploads/types.ts',
  'src/http/public-types.ts',
  'src/testing/options.ts',
  'src/testing/server.ts',
  'src/testing/faults.ts',
  'src/testing/handler.ts',
].map((file) => join(REPO_ROOT, file));
let program: ts.Program | undefined;

export function sourceOf(file: string): { checker: ts.TypeChecker; source: ts.SourceFile } {
  program ??= ts.createProgram(SOURCES, {
    strict: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    noEmit: true,
    types: [],
  });
  const source = program.getSourceFile(join(REPO_ROOT, file));
  if (source === undefined) throw new Error(`cannot read ${file}`);
  return { checker: program.getTypeChecker(), source };
}

/** Every property of an interface of a source file, inherited ones included. */
export function interfaceKeys(file: string, name: string): string[] {
  const { checker, source } = sourceOf(file);
  const declaration = source.statements.find(
    (statement): statement is ts.InterfaceDeclaration =>
      ts.isInterfaceDeclaration(statement) && statement.name.text === name,
  );
  if (declaration === undefined) throw new Error(`${file} declares no interface ${name}`);
  return checker.getPropertiesOfType(checker.getTypeAtLocation(declaration)).map((symbol) => symbol.getName());
}

/** The string literals of an interface property's union type (`reason: 'a' | 'b'` gives a, b). */
export function literalsOf(file: string, name: string, property: string): string[] {
  const { checker, source } = sourceOf(file);
  const declaration = source.statements.find(
    (statement): statement is ts.InterfaceDeclaration =>
      ts.isInterfaceDeclaration(statement) && statement.name.text === name,
  );
  if (declaration === undefined) throw new Error(`${file} declares no interface ${name}`);
  const symbol = checker.getTypeAtLocation(declaration).getProperty(property);
  if (symbol === undefined) throw new Error(`${name} has no ${property}`);
  const type = checker.getNonNullableType(checker.getTypeOfSymbol(symbol));
  return (type.isUnion() ? type.types : [type]).flatMap((part) => (part.isStringLiteral() ? [part.value] : []));
}

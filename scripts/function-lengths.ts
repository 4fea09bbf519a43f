/**
 * Lists the library's functions over a length limit, read with TypeScript's parser.
 *
 * What is read: every `.ts` file under src/ (less src/drill, a tool rather than the library) and machines/ (less
 * the generated `*.table.ts`).
 *
 * What counts as a function: function declarations, methods (with constructors, getters and setters), arrow
 * functions and function expressions, each counted on its own, so an arrow inside a function is listed by itself
 * and its lines also count for the function around it.
 *
 * How long a function is: the lines from its first token (its `function`/`async` keyword, its name for a method,
 * its parameters for an arrow; leading comments and decorators are not part of it) to its last (the closing brace,
 * or an arrow's expression body), both included. A one-line arrow is 1 line long.
 *
 * How a function is named: by its declaration, method, property or variable name, after the names of the
 * functions and classes around it (`OutboxRunner.flush`, `fetchTransportWith.send`); a function with no name of its
 * own is `<anonymous>`, and a repeated name in one file takes `#2`, `#3`, in source order.
 *
 * Run with `npm run function-lengths` (limit 100) or `npm run function-lengths -- 60`.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const LINE_LIMIT = 100;

export interface FunctionLength {
  /** Path from the repository root, with forward slashes. */
  file: string;
  /** The qualified name (see the comment at the top of this file). */
  name: string;
  /** 1-based line of the function's first token. */
  line: number;
  lines: number;
}

const repoRoot = fileURLToPath(new URL('..', import.meta.url));

/** The files the limit holds for, relative to the repository root. */
export function libraryFiles(root: string = repoRoot): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) return path === 'src/drill' ? [] : walk(path);
      return entry.name.endsWith('.ts') && !entry.name.endsWith('.table.ts') ? [path] : [];
    });
  return [...walk('src'), ...walk('machines')].sort();
}

type FunctionNode =
  | ts.FunctionDeclaration
  | ts.MethodDeclaration
  | ts.ConstructorDeclaration
  | ts.GetAccessorDeclaration
  | ts.SetAccessorDeclaration
  | ts.ArrowFunction
  | ts.FunctionExpression;

function isFunctionNode(node: ts.Node): node is FunctionNode {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node) ||
    ts.isArrowFunction(node) ||
    ts.isFunctionExpression(node)
  );
}

function propertyName(name: ts.PropertyName | ts.BindingName, source: ts.SourceFile): string | undefined {
  if (ts.isIdentifier(name) || ts.isPrivateIdentifier(name)) return name.text;
  if (ts.isStringLiteral(name) || ts.isNumericLiteral(name)) return name.text;
  if (ts.isComputedPropertyName(name)) return `[${name.expression.getText(source)}]`;
  return undefined;
}

/** A function's own name, or the name of what it is assigned to. */
function ownName(node: FunctionNode, source: ts.SourceFile): string | undefined {
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  if (node.name) return propertyName(node.name, source);
  const parent = node.parent;
  if (
    ts.isVariableDeclaration(parent) ||
    ts.isPropertyAssignment(parent) ||
    ts.isPropertyDeclaration(parent)
  ) {
    return propertyName(parent.name, source);
  }
  if (ts.isBinaryExpression(parent) && parent.operatorToken.kind === ts.SyntaxKind.EqualsToken) {
    return parent.left.getText(source);
  }
  return undefined;
}

/** The lengths of every function in one file's text. */
export function functionLengths(file: string, text: string): FunctionLength[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: FunctionLength[] = [];
  const seen = new Map<string, number>();
  const lineOf = (pos: number): number => source.getLineAndCharacterOfPosition(pos).line + 1;

  const visit = (node: ts.Node, outer: readonly string[]): void => {
    let inner = outer;
    if (isFunctionNode(node)) {
      const base = [...outer, ownName(node, source) ?? '<anonymous>'].join('.');
      const count = (seen.get(base) ?? 0) + 1;
      seen.set(base, count);
      const name = count === 1 ? base : `${base}#${count}`;
      const line = lineOf(node.getStart(source));
      found.push({ file, name, line, lines: lineOf(node.getEnd()) - line + 1 });
      inner = [...outer, ownName(node, source) ?? '<anonymous>'];
    } else if (ts.isClassDeclaration(node) || ts.isClassExpression(node)) {
      inner = [...outer, node.name?.text ?? '<class>'];
    }
    ts.forEachChild(node, (child) => visit(child, inner));
  };
  visit(source, []);
  return found;
}

/** Every library function longer than `limit` lines, longest first. */
export function functionsOver(limit: number = LINE_LIMIT, root: string = repoRoot): FunctionLength[] {
  return libraryFiles(root)
    .flatMap((file) => functionLengths(file, readFileSync(join(root, file), 'utf8')))
    .filter((fn) => fn.lines > limit)
    .sort((a, b) => b.lines - a.lines || a.file.localeCompare(b.file) || a.line - b.line);
}

export function formatReport(functions: readonly FunctionLength[], limit: number): string {
  if (functions.length === 0) return `No function over ${limit} lines.`;
  const rows = functions.map((fn) => `${String(fn.lines).padStart(5)}  ${fn.file}:${fn.line}  ${fn.name}`);
  return [`${functions.length} function(s) over ${limit} lines:`, ...rows].join('\n');
}

if (process.argv[1] && relative(process.argv[1], fileURLToPath(import.meta.url)) === '') {
  const limit = process.argv[2] === undefined ? LINE_LIMIT : Number(process.argv[2]);
  if (!Number.isInteger(limit) || limit < 1) {
    console.error(`function-lengths: the limit must be a whole number >= 1 (asked ${process.argv[2]})`);
    process.exit(2);
  }
  console.log(formatReport(functionsOver(limit), limit));
}

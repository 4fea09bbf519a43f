import { describe, expect, it } from 'vitest';

import { LINE_LIMIT, functionLengths, functionsOver } from '../../scripts/function-lengths.js';

/**
 * The functions still over the limit, each with its length today (`npm run function-lengths`). A length here may
 * only shrink: a listed function that grows fails, and one that falls to the limit or under must leave the list.
 */
const ALLOWED_OVER_LIMIT: Readonly<Record<string, number>> = {};

describe('function lengths (scripts/function-lengths.ts)', () => {
  const over = functionsOver(LINE_LIMIT);
  const measured = new Map(over.map((fn) => [`${fn.file} ${fn.name}`, fn]));

  it(`has no function over ${LINE_LIMIT} lines but those allowed, none longer than allowed`, () => {
    const problems = [...measured].flatMap(([key, fn]) => {
      const allowed = ALLOWED_OVER_LIMIT[key];
      if (allowed === undefined) return [`${key} (line ${fn.line}) is ${fn.lines} lines: split it`];
      if (fn.lines > allowed) return [`${key} grew from ${allowed} to ${fn.lines} lines`];
      return [];
    });
    expect(problems).toEqual([]);
  });

  it('lists each allowed function at its length today, so the list only shrinks', () => {
    const stale = Object.entries(ALLOWED_OVER_LIMIT).flatMap(([key, allowed]) => {
      const fn = measured.get(key);
      if (fn === undefined)
        return [`${key} is ${LINE_LIMIT} lines or fewer (or gone): remove it from the list`];
      if (fn.lines < allowed)
        return [`${key} shrank from ${allowed} to ${fn.lines} lines: lower it in the list`];
      return [];
    });
    expect(stale).toEqual([]);
  });
});

describe('functionLengths', () => {
  it('counts each kind of function from its first token to its last, named by where it is', () => {
    const text = [
      '/** leading comments are not counted */',
      'export function outer(): void {',
      '  const inner = () =>',
      '    1;',
      '  [1].map(function () {',
      '    return inner();',
      '  });',
      '}',
      'class Box {',
      '  constructor() {}',
      '  get size() { return 1; }',
      '  open(): void {',
      '    void 0;',
      '  }',
      '}',
      'const o = { go: () => 2, [`x`]: function () {} };',
      'o.go = () => 3;',
      'o.go = () => 4;',
    ].join('\n');
    expect(functionLengths('f.ts', text).map(({ name, line, lines }) => [name, line, lines])).toEqual([
      ['outer', 2, 7],
      ['outer.inner', 3, 2],
      ['outer.<anonymous>', 5, 3],
      ['Box.constructor', 10, 1],
      ['Box.size', 11, 1],
      ['Box.open', 12, 3],
      ['go', 16, 1],
      ['[`x`]', 16, 1],
      ['o.go', 17, 1],
      ['o.go#2', 18, 1],
    ]);
  });
});

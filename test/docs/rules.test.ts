import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// docs/rules.md publishes the rules that error messages and comments cite by number. This keeps the two in
// step: every number cited in the source is a rule there, a message tells the user where to read it, and every
// file the page names (where a rule is enforced, which test proves it) exists.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const rulesPage = readFileSync(join(ROOT, 'docs/rules.md'), 'utf8');

/** Every .ts file under a directory of the repository, as [path relative to the root, contents]. */
function sources(dir: string): [string, string][] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => {
      const path = join(ROOT, dir, file);
      return [relative(ROOT, path), readFileSync(path, 'utf8')];
    });
}
const cited = [...sources('src'), ...sources('machines')];

const published = [...rulesPage.matchAll(/^## Rule (\d+): /gm)].map(([, n]) => Number(n));

describe('docs/rules.md', () => {
  it('publishes the ten rules, numbered 1 to 10 in order', () => {
    expect(published).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it('has every rule number that src/ and machines/ cite', () => {
    const citations = cited.flatMap(([file, text]) =>
      [...text.matchAll(/\brules? (\d+)\b/gi)].map(([, n]) => ({ file, rule: Number(n) })),
    );
    expect(citations.length).toBeGreaterThan(20);
    expect(citations.filter(({ rule }) => !published.includes(rule))).toEqual([]);
  });

  it('is where every message that cites a rule points: "(docs/rules.md, rule N)"', () => {
    // A string literal (quotes or backticks, on one line of code, not of a comment) that mentions a rule.
    const isComment = (line: string) => /^\s*(\/\/|\/\*|\*)/.test(line);
    const messages = cited.flatMap(([file, text]) =>
      text
        .split('\n')
        .filter((line) => !isComment(line))
        .flatMap((line) => [...line.matchAll(/(['"`])((?:(?!\1).)*\brule \d+(?:(?!\1).)*)\1/g)])
        .map(([, , message]) => ({ file, message })),
    );
    // The errors users see (a PolicyError's line) and the drill's report.
    expect(messages.map(({ file }) => file).sort()).toEqual([
      'src/drill/scenarios/expired-token.ts',
      'src/errors/withheld-error.ts',
      'src/policy/schema.ts',
      'src/runtime/validate-client-options.ts',
    ]);
    for (const { file, message } of messages) expect(message, file).toMatch(/\(docs\/rules\.md, rule \d+\)/);
  });

  it('names only files that exist', () => {
    const named = [...rulesPage.matchAll(/`((?:src|machines|test|scripts)\/[^`\s]+)`/g)].map(
      ([, path]) => path!,
    );
    expect(named.length).toBeGreaterThan(30);
    expect(named.filter((path) => !existsSync(join(ROOT, path)))).toEqual([]);
  });
});

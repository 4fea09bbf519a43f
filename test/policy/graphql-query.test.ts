import { describe, expect, it } from 'vitest';
import { isGraphQLQuery, operationsOf } from '../../src/policy/graphql-query.js';

const post = (body: unknown) => ({
  method: 'POST',
  path: '/graphql',
  headers: { 'content-type': 'application/json' },
  body: typeof body === 'string' ? body : JSON.stringify(body),
});

describe('isGraphQLQuery: a POST whose GraphQL operation reads', () => {
  it.each([
    ['a named query', { query: 'query Items { items { id } }' }, true],
    ['the query shorthand', { query: '{ items { id } }' }, true],
    [
      'a query with variables, default values and directives',
      {
        query:
          'query Q($first: Int = 10, $f: Filter = { tag: "x" }) @cached(ttl: 60) { items(first: $first) { id } }',
        variables: { first: 2 },
      },
      true,
    ],
    ['a query with a fragment', { query: 'query Q { items { ...F } } fragment F on Item { id }' }, true],
    ['an anonymous query with a directive', { query: 'query @live { items { id } }' }, true],
    ['a mutation', { query: 'mutation Add($n: String!) { add(name: $n) { id } }' }, false],
    ['a subscription', { query: 'subscription { changed { id } }' }, false],
    [
      'a mutation with the word query in a string and a comment',
      {
        query: '# query Items { x }\nmutation { add(note: "query { items }") { id } }',
      },
      false,
    ],
    [
      'a mutation with a block string',
      { query: 'mutation { add(doc: """\n{ query } \\""" """) { id } }' },
      false,
    ],
    [
      'two operations, operationName picks the query',
      {
        query: 'mutation Add { add { id } } query Items { items { id } }',
        operationName: 'Items',
      },
      true,
    ],
    [
      'two operations, operationName picks the mutation',
      {
        query: 'query Items { items { id } } mutation Add { add { id } }',
        operationName: 'Add',
      },
      false,
    ],
    [
      'two operations and no operationName: unsure',
      {
        query: 'query A { a } query B { b }',
      },
      false,
    ],
    ['an operationName that names none', { query: 'query A { a }', operationName: 'B' }, false],
    [
      'a persisted query (a hash, no document)',
      {
        extensions: { persistedQuery: { version: 1, sha256Hash: 'abc' } },
      },
      false,
    ],
    ['a batch of queries', [{ query: '{ a }' }, { query: 'query B { b }' }], true],
    ['a batch with a mutation in it', [{ query: '{ a }' }, { query: 'mutation { b }' }], false],
    ['an empty batch', [], false],
    ['a body that is not JSON', 'query { items }', false],
    ['unbalanced braces', { query: 'query { items { id }' }, false],
    ['an unterminated string', { query: 'query { items(q: "x) }' }, false],
    ['a schema definition, not an operation', { query: 'type Item { id: ID }' }, false],
    // An empty operationName names nothing: the document alone decides.
    ['an empty operationName', { query: 'query A { a }', operationName: '' }, true],
    ['a body of null', null, false],
    ['a body of a number', 5, false],
    ['a batch with null in it', [{ query: '{ a }' }, null], false],
  ])('%s', (_, body, expected) => {
    expect(isGraphQLQuery(post(body))).toBe(expected);
  });

  it('reads a body given as UTF-8 bytes; bytes that are not UTF-8 are unsure', () => {
    const bytes = new TextEncoder().encode(JSON.stringify({ query: '{ items { name } }' }));
    expect(isGraphQLQuery({ ...post(''), body: bytes })).toBe(true);
    expect(isGraphQLQuery({ ...post(''), body: new Uint8Array([0xff, 0xfe]) })).toBe(false);
    // Valid JSON around one byte that is not UTF-8 (0xff inside a string): still unsure, not read with U+FFFD.
    const [open, close] = JSON.stringify({ query: '{ a }', x: '#' })
      .split('#')
      .map((t) => new TextEncoder().encode(t));
    expect(isGraphQLQuery({ ...post(''), body: new Uint8Array([...open!, 0xff, ...close!]) })).toBe(false);
    expect(isGraphQLQuery({ ...post(''), body: undefined })).toBe(false);
  });

  it('leaves every method but POST to the method (a GET query is a read already)', () => {
    expect(isGraphQLQuery({ method: 'GET', path: '/graphql?query=%7Ba%7D', headers: {} })).toBe(undefined);
    expect(isGraphQLQuery({ ...post({ query: '{ a }' }), method: 'PUT' })).toBe(undefined);
    expect(isGraphQLQuery({ ...post({ query: '{ a }' }), method: 'post' })).toBe(true);
  });

  it('names each operation of a document in order, fragments left out', () => {
    expect(
      operationsOf('query A { a } fragment F on T { f } mutation B { b } { c } subscription { d }'),
    ).toEqual([
      { type: 'query', name: 'A' },
      { type: 'mutation', name: 'B' },
      { type: 'query', name: undefined },
      { type: 'subscription', name: undefined },
    ]);
  });

  const one = (name: string | undefined) => [{ type: 'query', name }];

  it.each([
    ['a comment ended by a line feed', '# mutation M { m }\nquery A { a }', one('A')],
    ['a comment ended by a carriage return', '# mutation M { m }\rquery A { a }', one('A')],
    ['a comment at the very end', 'query A { a } # done', one('A')],
    ['a comment holding a brace', 'query A { a # } \n }', one('A')],
    ['a block string holding braces and a quote', 'query A { a(t: """ } " { """) }', one('A')],
    ['a block string holding an escaped triple quote', 'query A { a(t: """x \\""" } """) }', one('A')],
    ['a string holding an escaped quote and a brace', 'query A { a(t: "x \\" }") }', one('A')],
    ['lists in variables and arguments', 'query A($ids: [ID] = [1, 2]) { a(ids: [3]) }', one('A')],
    ['a directive before the body', 'query @live { a } query R { b }', [...one(undefined), ...one('R')]],
    ['a directive after the name', 'query A @cached(ttl: 60) { a }', one('A')],
  ])('skips %s', (_, document, operations) => {
    expect(operationsOf(document)).toEqual(operations);
  });

  it.each([
    ['an unterminated block string', 'query A { a(t: """x) }'],
    ['a string broken by a line feed', 'query A { a(t: "x\ny") }'],
    ['an unterminated string at the top level', 'query A { a } "x'],
    ['a closing brace before any opening one', '} {'],
    ['a definition without a body', '{ a } query B'],
    ['a document ending in a keyword', '{ a } query'],
    ['a type definition', 'type Item { id: ID }'],
  ])('cannot read %s', (_, document) => {
    expect(operationsOf(document)).toBeUndefined();
  });
});

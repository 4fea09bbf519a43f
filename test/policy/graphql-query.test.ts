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
  ])('%s', (_, body, expected) => {
    expect(isGraphQLQuery(post(body))).toBe(expected);
  });

  it('reads a body given as UTF-8 bytes; bytes that are not UTF-8 are unsure', () => {
    const bytes = new TextEncoder().encode(JSON.stringify({ query: '{ items { name } }' }));
    expect(isGraphQLQuery({ ...post(''), body: bytes })).toBe(true);
    expect(isGraphQLQuery({ ...post(''), body: new Uint8Array([0xff, 0xfe]) })).toBe(false);
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
});

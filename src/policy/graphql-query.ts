/** What `isIdempotent` is handed: the request as the app made it (its body as given, a string or bytes). */
export interface IdempotencyQuestion {
  method: string;
  path: string;
  headers: Readonly<Record<string, string>>;
  body?: string | Uint8Array | undefined;
}

/**
 * Whether a request is a GraphQL query: a POST whose JSON body is one operation (or a batch of them) that
 * reads (`query`), not a `mutation` or `subscription`. For `createFailoverClient({ isIdempotent: isGraphQLQuery })`,
 * so GraphQL reads are retried and fail over while mutations keep the write rules (rule 2).
 *
 * When unsure it says `false` (a write): a body that is not JSON, a persisted query that sends only a hash, a
 * document with several operations and no `operationName` naming one, a syntax it cannot read. A GET is a read
 * by its method already: `undefined` leaves it (and every other method but POST) to the method.
 */
export function isGraphQLQuery(request: IdempotencyQuestion): boolean | undefined {
  if (request.method.toUpperCase() !== 'POST') return undefined;
  const text =
    typeof request.body === 'string'
      ? request.body
      : request.body instanceof Uint8Array
        ? decodeUtf8(request.body)
        : undefined;
  if (text === undefined) return false;
  let payload: unknown;
  try {
    payload = JSON.parse(text);
  } catch {
    return false;
  }
  // A batch (Apollo's BatchHttpLink) reads only if every operation in it reads.
  if (Array.isArray(payload)) return payload.length > 0 && payload.every(isQueryPayload);
  return isQueryPayload(payload);
}

function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

function isQueryPayload(payload: unknown): boolean {
  if (typeof payload !== 'object' || payload === null) return false;
  const { query, operationName } = payload as { query?: unknown; operationName?: unknown };
  if (typeof query !== 'string') return false; // a persisted query's hash alone: unknown
  const operations = operationsOf(query);
  if (operations === undefined) return false;
  const chosen =
    typeof operationName === 'string' && operationName !== ''
      ? operations.filter((op) => op.name === operationName)
      : operations;
  return chosen.length === 1 && chosen[0]!.type === 'query';
}

interface Operation {
  type: 'query' | 'mutation' | 'subscription';
  name: string | undefined;
}

/**
 * The operations a GraphQL document defines, in order (fragments are not operations), read from its top
 * level only: what lies inside braces, parentheses and brackets (selections, variables, arguments, default
 * values), strings, block strings and comments is skipped. `undefined` when the document cannot be read so.
 */
export function operationsOf(document: string): Operation[] | undefined {
  const operations: Operation[] = [];
  let depth = 0;
  let i = 0;
  /** At the top level: the keyword that opened the current definition, once seen, and its name. */
  let pending: Operation | 'fragment' | undefined;
  /** The next name is a directive's (`query @cached { ... }`), not the operation's. */
  let directive = false;
  const n = document.length;
  while (i < n) {
    const c = document[i]!;
    if (c === '#') {
      while (i < n && document[i] !== '\n' && document[i] !== '\r') i++;
    } else if (document.startsWith('"""', i)) {
      const end = document.indexOf('"""', i + 3);
      // A block string ends at the first """ not escaped as \""".
      let close = end;
      while (close !== -1 && document[close - 1] === '\\') close = document.indexOf('"""', close + 3);
      if (close === -1) return undefined;
      i = close + 3;
    } else if (c === '"') {
      i++;
      while (i < n && document[i] !== '"') {
        if (document[i] === '\n') return undefined;
        i += document[i] === '\\' ? 2 : 1;
      }
      if (i >= n) return undefined;
      i++;
    } else if (c === '{' || c === '(' || c === '[') {
      if (depth === 0 && c === '{') {
        // A selection set at the top level: the body of the definition begun, or the query shorthand `{ ... }`.
        if (pending === undefined) operations.push({ type: 'query', name: undefined });
        else if (pending !== 'fragment') operations.push(pending);
        pending = undefined;
      }
      depth++;
      i++;
    } else if (c === '}' || c === ')' || c === ']') {
      depth--;
      if (depth < 0) return undefined;
      i++;
    } else if (/[_A-Za-z]/.test(c)) {
      const start = i;
      while (i < n && /[_0-9A-Za-z]/.test(document[i]!)) i++;
      const word = document.slice(start, i);
      if (directive) directive = false;
      else if (depth === 0) {
        if (pending === undefined) {
          if (word === 'query' || word === 'mutation' || word === 'subscription')
            pending = { type: word, name: undefined };
          else if (word === 'fragment') pending = 'fragment';
          else return undefined; // a type system definition, or not GraphQL: not a request document
        } else if (pending !== 'fragment' && pending.name === undefined) {
          pending.name = word;
        }
      }
    } else {
      if (c === '@' && depth === 0) directive = true;
      i++;
    }
  }
  if (depth !== 0 || pending !== undefined) return undefined;
  return operations;
}

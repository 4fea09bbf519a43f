import { FailwiseError } from '../errors/failwise-error.js';

/** An error's message, or the thrown value as text: for store errors that name their cause. */
export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/**
 * Loads an optional peer dependency of a store (`import('better-sqlite3')`, `import('pg')`), turning a missing one
 * into a FailwiseError that says how to install it, and any other load failure into one that names the package.
 */
export async function loadOptionalPeer(
  load: () => Promise<unknown>,
  store: string,
  peer: { name: string; install: string },
): Promise<unknown> {
  try {
    return await load();
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
      throw new FailwiseError(
        `${store} needs ${peer.name}, an optional peer dependency that is not installed: npm install ${peer.install}`,
        { cause: error },
      );
    }
    throw new FailwiseError(`${store}: could not load ${peer.name}: ${messageOf(error)}`, { cause: error });
  }
}

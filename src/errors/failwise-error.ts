/** The base of every error failwise throws. Network and server failures are never thrown: they are `Outcome`s. */
export class FailwiseError extends Error {
  override name = 'FailwiseError';
}

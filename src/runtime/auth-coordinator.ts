/** What an app gives failwise to authenticate requests (rule 3). */
export interface AuthProvider {
  /** The headers to send to this origin, e.g. `{ authorization: 'Bearer …' }`. Called before every attempt. */
  headers(originId: string): Record<string, string> | Promise<Record<string, string>>;
  /** Gets new credentials after a 401. failwise calls it at most once per request, shared by concurrent ones. */
  refresh(): Promise<void>;
}

export interface AuthCoordinator {
  /** The headers for an attempt, and the generation of the credentials they came from. */
  headers(originId: string): Promise<{ headers: Record<string, string>; generation: number }>;
  /**
   * Refreshes once for everyone who saw a 401 on credentials of generation `seen`: concurrent callers
   * share one `auth.refresh()`, and a caller whose 401 answered older credentials than the current
   * ones does not refresh at all (someone already did).
   */
  refresh(seen: number | undefined): Promise<void>;
}

export function createAuthCoordinator(auth: AuthProvider): AuthCoordinator {
  let generation = 0;
  let refreshing: Promise<void> | undefined;
  return {
    async headers(originId) {
      const current = generation;
      return { headers: await auth.headers(originId), generation: current };
    },
    refresh(seen) {
      if (refreshing) return refreshing;
      if (seen !== undefined && seen < generation) return Promise.resolve();
      refreshing = Promise.resolve()
        .then(() => auth.refresh())
        .then(() => {
          generation += 1;
        })
        .finally(() => {
          refreshing = undefined;
        });
      return refreshing;
    },
  };
}

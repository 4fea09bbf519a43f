// The `failwise/tanstack-query` entry (docs/integrations.md): defaults under which TanStack Query never multiplies
// failwise's attempts, a query's or mutation's own failwise policy read from its `meta`, and an onlineManager that follows the device, not the API. It imports nothing of
// `@tanstack/query-core` (an optional peer): it works on the objects the app passes in.
export { metaPolicy, queryDefaults, syncOnlineManager } from './integrations/tanstack-query.js';
export type { FailwiseQueryDefaults, MetaContext, OnlineManagerLike } from './integrations/tanstack-query.js';

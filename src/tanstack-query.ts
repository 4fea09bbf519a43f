// The `failwise/tanstack-query` entry (docs/integrations.md): defaults under which TanStack Query never multiplies
// failwise's attempts, and an onlineManager that follows the device, not the API. It imports nothing of
// `@tanstack/query-core` (an optional peer): it works on the objects the app passes in.
export { queryDefaults, syncOnlineManager } from './integrations/tanstack-query.js';
export type { FailwiseQueryDefaults, OnlineManagerLike } from './integrations/tanstack-query.js';

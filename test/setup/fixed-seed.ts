// Every property in `npm test` runs from one fixed seed, so a run is reproducible and a red test stays red
// until the code changes (random exploration belongs to `npm run crash-soak`). To explore, or to replay a seed
// printed elsewhere: FAILWISE_FC_SEED=1234 npx vitest run test/properties/x.test.ts.
import { fc } from '@fast-check/vitest';

/** The seed of `npm test` (any fixed integer; changing it is a deliberate act, like changing a test). */
export const FIXED_SEED = 20_261_201;

const fromEnv = process.env['FAILWISE_FC_SEED'];
const seed = fromEnv === undefined ? FIXED_SEED : Number(fromEnv);
if (!Number.isInteger(seed)) throw new Error(`FAILWISE_FC_SEED: expected an integer, got ${fromEnv}`);

fc.configureGlobal({ ...fc.readConfigureGlobal(), seed });

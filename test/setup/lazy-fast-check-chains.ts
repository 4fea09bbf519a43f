// A vite plugin that makes @fast-check/vitest build its chained test APIs on demand instead of at import.
//
// Why: @fast-check/vitest 0.5.0 wraps every chain of vitest's `test` (`test.skip.concurrent.only…`) at import,
// one wrapper per ordering of the chain keys. Vitest 4.1's `test` has 22 function keys, so the import takes
// 5 to 10 s of CPU (measured: 10.7 s of "import" for a one-line test file, 0.1 s for `fast-check` alone),
// paid again by every fresh worker. Stryker's vitest runner starts a fresh worker for every mutant run, so
// this import was almost all of the per-mutant time (docs/verification.md, "Mutation testing").
//
// The replacement builds the same wrappers, from the same calls, when a key is first read: `test.prop`,
// `test.skip.prop` and the rest behave as before.
import type { Plugin } from 'vite';

/** The package's module; its name is also what vitest must inline so that this plugin sees it. */
export const FAST_CHECK_VITEST = '@fast-check/vitest';

const EAGER = `function buildTest(testFn, testFnExtended, fc, ancestors = /* @__PURE__ */ new Set()) {
	let atLeastOneExtra = false;
	const extraKeys = {};
	for (const unsafeKey of Object.getOwnPropertyNames(testFnExtended)) {
		const key = unsafeKey;
		if (!ancestors.has(key) && typeof testFnExtended[key] === "function") {
			atLeastOneExtra = true;
			extraKeys[key] = key !== "each" ? buildTest(testFn[key], testFnExtended[key], fc, /* @__PURE__ */ new Set([...ancestors, key])) : testFn[key].bind(testFn);
		}
	}
	if (!atLeastOneExtra) return testFnExtended;
	const enrichedTestFnExtended = (...args) => testFnExtended(...args);
	if ("each" in testFnExtended) extraKeys["prop"] = buildTestProp(testFn, fc);
	return Object.assign(enrichedTestFnExtended, extraKeys);
}`;

// Same keys, same values, same order of assignment; each key a memoised getter instead of a data property.
const LAZY = `function buildTest(testFn, testFnExtended, fc, ancestors = new Set()) {
	const keys = Object.getOwnPropertyNames(testFnExtended).filter((key) => !ancestors.has(key) && typeof testFnExtended[key] === "function");
	if (keys.length === 0) return testFnExtended;
	const enrichedTestFnExtended = (...args) => testFnExtended(...args);
	for (const key of keys) {
		let built;
		Object.defineProperty(enrichedTestFnExtended, key, {
			configurable: true,
			enumerable: true,
			get: () => (built ??= key !== "each" ? buildTest(testFn[key], testFnExtended[key], fc, new Set([...ancestors, key])) : testFn[key].bind(testFn)),
		});
	}
	if ("each" in testFnExtended) Object.defineProperty(enrichedTestFnExtended, "prop", { configurable: true, enumerable: true, writable: true, value: buildTestProp(testFn, fc) });
	return enrichedTestFnExtended;
}`;

/**
 * Rewrites `buildTest` in @fast-check/vitest (which must be listed in `test.server.deps.inline`, or vitest
 * loads it without vite). Fails loudly if the package's code changed, so that an upgrade is checked by hand.
 */
export function lazyFastCheckChains(): Plugin {
  return {
    name: 'failwise:lazy-fast-check-chains',
    enforce: 'pre',
    transform(code, id) {
      if (!id.includes(`/node_modules/${FAST_CHECK_VITEST}/`)) return null;
      if (!code.includes(EAGER)) {
        throw new Error(
          `lazyFastCheckChains: ${id} no longer has the buildTest this plugin replaces; check whether the new version still needs it`,
        );
      }
      return { code: code.replace(EAGER, LAZY), map: null };
    },
  };
}

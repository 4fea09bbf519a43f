/**
 * `npm run bench:hermes`: the success and retry paths on React Native's engine.
 *
 *   HERMES_VM=../shared/tools/hermes/hermes npm run bench:hermes             prints the tables
 *   HERMES_VM=../shared/tools/hermes/hermes npm run bench:hermes -- --write  and rewrites docs/benchmarks.md's section
 *   ... -- --quick                                                          2 short rounds (a smoke test)
 *   ... -- --rounds=4                                                       4 rounds rather than 10 (while iterating)
 *
 * Bundles bench/hermes/host.ts and bench/hermes/script.ts for Hermes, compiles them with hermesc as a React
 * Native release build does (scripts/hermes-bytecode.ts) and runs the bytecode on the VM `HERMES_VM` names; then
 * the same script after bench/hermes/host-react-native.ts (React Native's own AbortController and URL, as 0.87
 * and later install them) and after bench/hermes/host-react-native-before-0.87.ts (the abort-controller package's,
 * as 0.70 to 0.86 do). A maintainer's benchmark: `npm test` never needs the VM.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { format, resolveConfig } from 'prettier';

import { bundleForHermes, compileWithHermesc, hermescPath } from '../../scripts/hermes-bytecode.js';
import { REACT_NATIVE_DEFINE, metroRequires, reactNativeFlow } from '../../scripts/react-native-flow.js';
import { hermesRatios, hermesSection, parseHermesOutput, withHermesSection } from './hermes-report.js';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const DOC = fileURLToPath(new URL('../../docs/benchmarks.md', import.meta.url));
const args = new Set(process.argv.slice(2));
const rounds = args.has('--quick')
  ? { rounds: 2, roundMs: 50, warmupMs: 100 }
  : { rounds: 10, roundMs: 300, warmupMs: 600 };
const roundsArg = process.argv.find((arg) => arg.startsWith('--rounds='));
if (roundsArg) rounds.rounds = Number(roundsArg.slice('--rounds='.length));

/** The first line a program prints for `flag` (its version), or why it could not be read. */
function versionOf(file: string, flag: string): string {
  const run = spawnSync(file, [flag], { encoding: 'utf8' });
  const line = `${run.stdout}`.split('\n').find((text) => /release version/i.test(text));
  return line?.trim().replace(/^Hermes release version:\s*/i, 'Hermes ') ?? 'version unknown';
}

async function main() {
  const vm = process.env.HERMES_VM;
  if (!vm) throw new Error('bench:hermes: set HERMES_VM to a Hermes VM (e.g. ../shared/tools/hermes/hermes)');
  const started = Date.now();
  const host = await bundleForHermes({ entry: path.join(HERE, 'host.ts') });
  // React Native's modules, bundled as Metro would load them.
  const reactNativeBundle = async (entry: string) =>
    metroRequires(
      await bundleForHermes({
        entry: path.join(HERE, entry),
        define: REACT_NATIVE_DEFINE,
        plugins: [reactNativeFlow],
      }),
    );
  const reactNativeHost = await reactNativeBundle('host-react-native.ts');
  const reactNativeBefore087Host = await reactNativeBundle('host-react-native-before-0.87.ts');
  const script = await bundleForHermes({
    entry: path.join(HERE, 'script.ts'),
    define: { BENCH_ROUNDS: JSON.stringify(rounds) },
  });
  const dir = mkdtempSync(path.join(tmpdir(), 'failwise-bench-hermes-'));
  try {
    /** The script after `prelude`, compiled and run on the VM: its results. */
    const runAfter = (prelude: string, name: string) => {
      const bytecode = path.join(dir, `${name}.hbc`);
      const compiled = compileWithHermesc(`${prelude}\n${script}`, bytecode);
      if (compiled.status !== 0)
        throw new Error(`bench:hermes: hermesc failed:\n${compiled.errors.join('\n')}`);
      process.stderr.write(
        `bench:hermes: ${name}: ${rounds.rounds} rounds of ${rounds.roundMs} ms per peer on ${vm}\n`,
      );
      const run = spawnSync(vm, [bytecode], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
      if (run.error) throw run.error;
      return parseHermesOutput(`${run.stdout}\n${run.stderr}`);
    };
    const results = runAfter(host, 'stand-ins');
    const reactNative = runAfter(reactNativeHost, 'react-native');
    const reactNativeBefore087 = runAfter(reactNativeBefore087Host, 'react-native-before-0.87');
    const section = hermesSection(
      results,
      {
        command: `HERMES_VM=${vm} npm run bench:hermes${args.has('--quick') ? ' -- --quick' : ''}`,
        date: `${new Date(started).toISOString().slice(0, 16).replace('T', ' ')} UTC`,
        vm: versionOf(vm, '-version'),
        hermesc: `hermesc (${versionOf(hermescPath(), '-version')})`,
        durationS: (Date.now() - started) / 1000,
      },
      { current: reactNative, before087: reactNativeBefore087 },
    );
    console.log(section);
    console.log(
      JSON.stringify({
        standIns: hermesRatios(results),
        reactNative: hermesRatios(reactNative),
        reactNativeBefore087: hermesRatios(reactNativeBefore087),
      }),
    );
    if (args.has('--write')) {
      const markdown = withHermesSection(readFileSync(DOC, 'utf8'), section);
      const options = (await resolveConfig(DOC)) ?? {};
      writeFileSync(DOC, await format(markdown, { ...options, filepath: DOC }));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exitCode = 1;
});

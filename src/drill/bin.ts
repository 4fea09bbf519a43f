#!/usr/bin/env node
/** The `failwise-drill` command (`npm start`); src/drill/cli.ts has the logic. */
import { main } from './cli.js';

process.exitCode = await main(process.argv.slice(2));

import { ConfigError } from '../config.js';
import { buildProgram } from './program.js';

try {
  await buildProgram().parseAsync(process.argv);
} catch (err) {
  // A bad setting is the operator's to fix, said in one line (as every command's own errors are), not a stack trace.
  if (!(err instanceof ConfigError)) throw err;
  console.error(`error: ${err.message}`);
  process.exitCode = 1;
}

import { ConfigError } from '../config.js';
import { describeFailure, isDatabaseUnreachable } from '../db/database.js';
import { buildProgram } from './program.js';

try {
  await buildProgram().parseAsync(process.argv);
} catch (err) {
  // A bad setting or an unreachable database is the operator's to fix, said in one line (as every command's own
  // errors are), not a stack trace.
  if (!(err instanceof ConfigError) && !isDatabaseUnreachable(err)) throw err;
  console.error(`error: ${describeFailure(err)}`);
  process.exitCode = 1;
}

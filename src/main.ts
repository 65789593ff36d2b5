import { loadConfig } from './config.js';
import { startServer } from './server.js';

/** `npm start`: the server with its in-process dispatcher, configured from the environment. */
startServer(loadConfig(process.env)).catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});

import { loadConfig } from './config.js';
import { describeFailure } from './db/database.js';
import { startServer } from './server.js';

/** `npm start`: the server with its in-process dispatcher, configured from the environment. */
startServer(loadConfig(process.env)).catch((err: unknown) => {
  console.error(describeFailure(err));
  process.exit(1);
});

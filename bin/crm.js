#!/usr/bin/env node
import('../dist/src/cli/index.js').catch((err) => {
  if (err && err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('dist/src/cli')) {
    console.error('crm is not built yet: run `npm run build` (npm start and npm test build it too).');
    process.exit(1);
  }
  throw err;
});

// Prints vitest's JSON report as one plain closing line: "N passed, N failed, N skipped".
import { readFileSync } from 'node:fs';

const report = JSON.parse(readFileSync(process.argv[2] ?? 'test-results.json', 'utf8'));
const failed = report.numFailedTests;
console.log(`tests: ${report.numPassedTests} passed, ${failed} failed, ${report.numPendingTests + (report.numTodoTests ?? 0)} skipped`);

// Prints the plain closing line CI reads: "tests: N passed, N failed, N skipped", summed over every results file
// given (the full run and the plain-driver run), after one line per file.
const { resolve } = require('node:path')
const total = { passed: 0, failed: 0, skipped: 0 }
for (const file of process.argv.slice(2)) {
  const results = require(resolve(file))
  const counts = { passed: results.numPassedTests, failed: results.numFailedTests, skipped: results.numPendingTests + results.numTodoTests }
  console.log(`${file}: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`)
  for (const key of Object.keys(total)) total[key] += counts[key]
}
console.log(`tests: ${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped`)

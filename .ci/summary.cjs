// Prints the plain closing line CI reads: "tests: N passed, N failed, N skipped", summed over every results file
// given (the full run and the plain-driver run), after one line per file and one line per failed test (its file, its
// name and the first line of its failure): a CI log may keep only its tail, and the failures must be in it.
const { relative, resolve } = require('node:path')
const total = { passed: 0, failed: 0, skipped: 0 }
for (const file of process.argv.slice(2)) {
  const results = require(resolve(file))
  const counts = { passed: results.numPassedTests, failed: results.numFailedTests, skipped: results.numPendingTests + results.numTodoTests }
  for (const suite of results.testResults ?? []) {
    for (const test of suite.assertionResults ?? []) {
      if (test.status !== 'failed') continue
      const cause = String(test.failureMessages?.[0] ?? '').split('\n')[0].slice(0, 300)
      console.log(`FAILED ${relative(process.cwd(), suite.name)} > ${test.fullName}: ${cause}`)
    }
    // A file that failed to load has no tests to list, only its own message.
    if (suite.status === 'failed' && (suite.assertionResults ?? []).length === 0) {
      console.log(`FAILED ${relative(process.cwd(), suite.name)}: ${String(suite.message ?? '').split('\n')[0].slice(0, 300)}`)
    }
  }
  console.log(`${file}: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`)
  for (const key of Object.keys(total)) total[key] += counts[key]
}
console.log(`tests: ${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped`)

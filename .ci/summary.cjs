// Prints the plain closing line CI reads: "tests: N passed, N failed, N skipped".
const results = require(require('node:path').resolve(process.argv[2]))
const skipped = results.numPendingTests + results.numTodoTests
console.log(`tests: ${results.numPassedTests} passed, ${results.numFailedTests} failed, ${skipped} skipped`)

import { openEmbedded } from '../../../db/embedded.js'

/**
 * A process that holds an embedded store: opens and migrates SVC_DATA_DIR (argv[2]), prints "open", and keeps it until its stdin
 * closes. For the tests of the one-process-per-store rule.
 */
const store = openEmbedded(process.argv[2] ?? '')
await store.migrate()
process.stdout.write('open\n')
process.stdin.resume()
process.stdin.on('end', () => {
  void store.close().then(() => process.exit(0))
})

import { createServer } from 'node:http'
import { Webhook } from 'standardwebhooks'

const webhook = new Webhook(process.env.SVC_WEBHOOK_SECRET) // the whsec_... the PUT answered
const seen = new Set() // in production: a table with a unique key on webhook-id

createServer((req, res) => {
  const chunks = []
  req.on('data', (chunk) => chunks.push(chunk))
  req.on('end', () => {
    let event
    try {
      // The raw body, before any parsing; also refuses a timestamp more than 5 minutes from this clock.
      event = webhook.verify(Buffer.concat(chunks).toString('utf8'), req.headers)
    } catch {
      return res.writeHead(400).end()
    }
    const id = req.headers['webhook-id']
    if (!seen.has(id)) {
      seen.add(id)
      console.log(`message ${event.data.messageId}: ${event.data.successCount} of ${event.data.recipientCount} delivered`)
    }
    res.writeHead(204).end() // answer fast: do slow work after answering
  })
}).listen(Number(process.env.PORT ?? 3000))

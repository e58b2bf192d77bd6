import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { usageReportJson } from '../../../db/repos/audit/sms-usage.js'
import { sendJsonText } from '../../../lib/http/json-text.js'
import { ProblemSchema } from '../../../lib/http/problem-schema.js'
import { checkUsageRange } from '../../../lib/audit/usage-range.js'
import { UsageQuerySchema, UsageReportSchema } from './usage.schemas.js'

const errors = { 400: ProblemSchema, 401: ProblemSchema, 403: ProblemSchema }

// What the academy is charged for is the OWNER's and MANAGER's business, not an INSTRUCTOR's.
const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/usage',
    {
      config: { access: { audience: { roles: ['OWNER', 'MANAGER'] }, apiKeyScope: 'usage:read' } },
      schema: {
        operationId: 'getSmsUsage',
        summary: 'Messages, recipients, cost and delivery per local day, counted on the day each message was accepted',
        tags: ['sms'],
        querystring: UsageQuerySchema,
        response: { 200: UsageReportSchema, ...errors },
      },
    },
    async (request, reply) => {
      const { from, to } = request.query
      checkUsageRange(from, to)
      const timeZone = app.env.SVC_TIME_ZONE
      const { totals, days } = await usageReportJson(request.db, request.caller.tenantId, { from, to, timeZone })
      // totals and days arrive as JSON text in UsageReportSchema's shapes.
      const range = `"timeZone":${JSON.stringify(timeZone)},"from":${JSON.stringify(from)},"to":${JSON.stringify(to)}`
      return sendJsonText(reply, `{${range},"totals":${totals},"days":${days}}`)
    },
  )
}

export default routes

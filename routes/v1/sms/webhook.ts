import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { DELIVERY_REPORT_BODY_LIMIT } from '../../../lib/http/body-limits.js'
import { applyDeliveryReports } from '../../../lib/dispatch/delivery/apply-reports.js'
import { parseDeliveryReports } from '../../../lib/dispatch/delivery/delivery-report.js'

const WebhookResultSchema = Type.Object({ processed: Type.Integer(), ignored: Type.Integer() }, { $id: 'DeliveryReportResult' })

// The provider's delivery reports (docs/provider.md#delivery-reports), authenticated by X-Provider-Secret.
const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/solapi/webhook',
    {
      bodyLimit: DELIVERY_REPORT_BODY_LIMIT,
      config: { access: 'provider-callback' },
      schema: {
        operationId: 'receiveDeliveryReports',
        summary: 'Delivery reports from the SMS provider',
        tags: ['provider-callback'],
        headers: Type.Object({ 'x-provider-secret': Type.Optional(Type.String()) }),
        // Elements are checked one by one (a bad one is ignored, not fatal); only the array itself is required.
        body: Type.Array(Type.Unknown(), { maxItems: 10_000 }),
        response: { 200: WebhookResultSchema },
      },
    },
    async (request) => {
      const prices = { sms: app.env.SVC_SMS_PRICE_SMS, lms: app.env.SVC_SMS_PRICE_LMS }
      const result = await applyDeliveryReports(app.db, parseDeliveryReports(request.body), prices)
      app.metrics.deliveryReports(result.processed, result.ignored)
      request.log.info(result, 'delivery reports applied')
      return result
    },
  )
}

export default routes

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { DELIVERY_REPORT_BODY_LIMIT } from '../../../lib/http/body-limits.js'
import { applyDeliveryReports } from '../../../lib/sms/delivery/apply-reports.js'
import { isValidProviderSecret } from '../../../lib/sms/delivery/provider-secret.js'
import { parseDeliveryReports } from '../../../lib/sms/delivery-report.js'
import { AppError } from '../../../lib/errors.js'

const WebhookResultSchema = Type.Object({ processed: Type.Integer(), ignored: Type.Integer() }, { $id: 'DeliveryReportResult' })

// The provider's delivery reports (docs/provider.md#delivery-reports). Not a staff route: X-Provider-Secret instead.
const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/solapi/webhook',
    {
      bodyLimit: DELIVERY_REPORT_BODY_LIMIT,
      config: { auth: false },
      // Checked before the body is read: an unauthenticated caller learns nothing about body validation.
      onRequest: async (request) => {
        const presented = request.headers['x-provider-secret']
        if (!isValidProviderSecret(typeof presented === 'string' ? presented : undefined, app.env.SVC_SMS_EXTSMS_WEBHOOK_TOKEN)) {
          throw new AppError('WEBHOOK_SECRET_INVALID')
        }
      },
      schema: {
        operationId: 'receiveDeliveryReports',
        summary: 'Delivery reports from the SMS provider',
        tags: ['provider-callback'],
        problems: ['WEBHOOK_SECRET_INVALID'],
        headers: Type.Object({ 'x-provider-secret': Type.Optional(Type.String()) }),
        // Elements are checked one by one (a bad one is ignored, not fatal); only the array itself is required.
        body: Type.Array(Type.Unknown(), { maxItems: 10_000 }),
        response: { 200: WebhookResultSchema },
      },
    },
    async (request) => {
      const result = await applyDeliveryReports(app.db, parseDeliveryReports(request.body))
      app.metrics.deliveryReports(result.processed, result.ignored)
      request.log.info(result, 'delivery reports applied')
      return result
    },
  )
}

export default routes

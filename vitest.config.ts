import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Autoload imports plugins and routes with import(); inlining it lets Vitest load their TypeScript sources.
    server: { deps: { inline: ['@fastify/autoload'] } },
    env: { NODE_ENV: 'test' },
    // CI reads a machine-readable summary to print its closing line.
    reporters: process.env.CI ? ['default', 'json'] : ['default'],
    outputFile: process.env.CI ? { json: 'test-results.json' } : undefined,
  },
})

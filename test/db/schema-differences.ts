import { CamelCasePlugin } from 'kysely'
import type { DatabaseColumn, DatabaseTables } from './database-columns.js'
import type { DeclaredColumn, SchemaDeclarations } from './schema-declarations.js'

/** The app's own mapping (db/database.ts installs the plugin): tenant_id <-> tenantId. */
class PropertyNames extends CamelCasePlugin {
  of(name: string): string {
    return this.camelCase(name)
  }
}
const camel = new PropertyNames()

/** Every way the declarations differ from the database, one line each, in the database's table order. */
export function schemaDifferences(declared: SchemaDeclarations, database: DatabaseTables): string[] {
  const differences = declared.errors.map((error) => `db/schema.ts does not type-check: ${error}`)
  const tableProperties = new Set<string>()
  for (const [table, columns] of database) {
    const property = camel.of(table)
    tableProperties.add(property)
    const declaredColumns = declared.tables.get(property)
    if (!declaredColumns) {
      differences.push(`table ${table}: DB has no property ${property}`)
      continue
    }
    const columnProperties = new Set<string>()
    for (const [column, actual] of columns) {
      const name = camel.of(column)
      columnProperties.add(name)
      const where = `${property}.${name} (${table}.${column} ${actual.type}${actual.nullable ? '' : ' not null'})`
      const declaredColumn = declaredColumns.get(name)
      if (!declaredColumn) differences.push(`${where}: missing from db/schema.ts`)
      else differences.push(...columnDifferences(declaredColumn, actual).map((difference) => `${where}: ${difference}`))
    }
    for (const name of declaredColumns.keys()) {
      if (!columnProperties.has(name)) differences.push(`${property}.${name}: table ${table} has no such column`)
    }
  }
  for (const property of declared.tables.keys()) {
    if (!tableProperties.has(property)) differences.push(`DB.${property}: the database has no such table`)
  }
  return differences
}

function columnDifferences(declared: DeclaredColumn, actual: DatabaseColumn): string[] {
  const differences: string[] = []
  // json values are whatever the document holds: an object type, an array type or unknown all fit.
  const fits = actual.category === 'json' ? declared.category === 'json' || declared.category.endsWith('[]') : declared.category === actual.category
  if (!fits) differences.push(`the driver reads it as ${actual.category}, db/schema.ts declares ${declared.text}`)
  if (actual.nullable && !declared.nullable) differences.push(`nullable, but the select type ${declared.text} has no null`)
  if (!actual.nullable && declared.nullable) differences.push(`NOT NULL, but the select type ${declared.text} includes null`)
  if (actual.literals) {
    if (!declared.literals) {
      differences.push(`the database allows only ${actual.literals.join(', ')}; db/schema.ts declares ${declared.text}`)
    } else if (declared.literals.join() !== actual.literals.join()) {
      differences.push(`the database allows ${actual.literals.join(', ')}; db/schema.ts declares ${declared.literals.join(', ')}`)
    }
  }
  // A nullable column without a default defaults to null, so an insert may leave it out either way.
  if (actual.filledBy && !declared.optionalOnInsert) {
    differences.push(`filled by ${actual.filledBy} when an insert leaves it out, so declare it Generated<...>`)
  } else if (!actual.filledBy && !actual.nullable && declared.optionalOnInsert) {
    differences.push('has no default, so an insert must give it, but its declared insert type lets Kysely leave it out')
  }
  return differences
}

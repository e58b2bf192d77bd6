import { dirname } from 'node:path'
import ts from 'typescript'

/**
 * What a column's values are in JavaScript: 'number', 'string', 'boolean', 'bigint', 'Date', 'Buffer', 'json' (an
 * object, an array read from json, unknown) or an array of one of them ('string[]'). 'mixed ...' when a union mixes
 * categories, which no column type produces.
 */
export type Category = string

/** One property of a table interface in db/schema.ts, as Kysely reads it. */
export interface DeclaredColumn {
  /** The select type without null (Generated<T> / ColumnType<S, I, U> unwrapped to S). */
  category: Category
  nullable: boolean
  /** The string literals when the select type is a union of them ('A' | 'B'); null for a plain string or others. */
  literals: string[] | null
  /** Kysely lets an insert leave it out: its insert type admits undefined or null, or is never. */
  optionalOnInsert: boolean
  /** The select type as written, for messages. */
  text: string
}

export interface SchemaDeclarations {
  /** Table (the `DB` property) -> column property -> declaration. */
  tables: Map<string, Map<string, DeclaredColumn>>
  /** The file's own type errors: an unresolved name would read as any and hide a difference. */
  errors: string[]
}

/**
 * Reads the `DB` interface of a schema file with the TypeScript checker, under the repository's tsconfig.json.
 * `text` replaces the file's content (the test proves it notices a changed schema without touching the file).
 */
export function readSchemaDeclarations(file: string, text?: string): SchemaDeclarations {
  const configFile = ts.findConfigFile(dirname(file), ts.sys.fileExists)
  if (!configFile) throw new Error(`no tsconfig.json above ${file}`)
  const { options } = ts.parseJsonConfigFileContent(ts.readConfigFile(configFile, ts.sys.readFile).config, ts.sys, dirname(configFile))
  const host = ts.createCompilerHost(options)
  if (text !== undefined) {
    const readFile = host.readFile.bind(host)
    host.readFile = (name) => (name === file ? text : readFile(name))
    const getSourceFile = host.getSourceFile.bind(host)
    host.getSourceFile = (name, language, onError, create) =>
      name === file ? ts.createSourceFile(name, text, language, true) : getSourceFile(name, language, onError, create)
  }
  const program = ts.createProgram([file], { ...options, noEmit: true }, host)
  const source = program.getSourceFile(file)
  if (!source) throw new Error(`TypeScript did not load ${file}`)
  const errors = ts
    .getPreEmitDiagnostics(program, source)
    .map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'))
  const checker = program.getTypeChecker()
  const dbInterface = source.statements.find(
    (statement): statement is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(statement) && statement.name.text === 'DB',
  )
  if (!dbInterface) throw new Error(`${file} declares no interface DB`)

  const tables = new Map<string, Map<string, DeclaredColumn>>()
  for (const table of checker.getPropertiesOfType(checker.getTypeAtLocation(dbInterface.name))) {
    const columns = new Map<string, DeclaredColumn>()
    for (const column of checker.getPropertiesOfType(checker.getTypeOfSymbol(table))) {
      columns.set(column.name, declaredColumn(checker, checker.getTypeOfSymbol(column)))
    }
    tables.set(table.name, columns)
  }
  return { tables, errors }
}

function declaredColumn(checker: ts.TypeChecker, type: ts.Type): DeclaredColumn {
  // Kysely's ColumnType<S, I, U> (and Generated<S>, built on it) is an object of three phantom properties.
  const selectSymbol = checker.getPropertyOfType(type, '__select__')
  const insertSymbol = checker.getPropertyOfType(type, '__insert__')
  const selected = selectSymbol ? checker.getTypeOfSymbol(selectSymbol) : type
  const inserted = insertSymbol ? checker.getTypeOfSymbol(insertSymbol) : type

  const parts = members(selected)
  const values = parts.filter((part) => !(part.flags & (ts.TypeFlags.Null | ts.TypeFlags.Undefined)))
  const categories = [...new Set(values.map((part) => category(checker, part)))]
  const strings = values.filter((part) => part.flags & ts.TypeFlags.StringLike)
  const literals =
    strings.length > 0 && strings.every((part) => part.isStringLiteral())
      ? strings.map((part) => (part as ts.StringLiteralType).value).sort()
      : null
  const insertParts = members(inserted)
  return {
    category: categories.length === 1 ? categories[0]! : `mixed ${categories.join(' | ') || 'never'}`,
    nullable: parts.some((part) => part.flags & ts.TypeFlags.Null),
    literals,
    optionalOnInsert:
      Boolean(inserted.flags & ts.TypeFlags.Never) ||
      insertParts.some((part) => part.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Null)),
    text: checker.typeToString(selected),
  }
}

function members(type: ts.Type): ts.Type[] {
  return type.isUnion() ? type.types : [type]
}

function category(checker: ts.TypeChecker, type: ts.Type): Category {
  if (type.flags & ts.TypeFlags.NumberLike) return 'number'
  if (type.flags & ts.TypeFlags.StringLike) return 'string'
  if (type.flags & ts.TypeFlags.BooleanLike) return 'boolean'
  if (type.flags & ts.TypeFlags.BigIntLike) return 'bigint'
  if (type.flags & ts.TypeFlags.Any) return 'any'
  if (checker.isArrayType(type)) {
    const element = checker.getTypeArguments(type as ts.TypeReference)[0]
    return `${element ? category(checker, element) : 'unknown'}[]`
  }
  const name = type.getSymbol()?.getName()
  if (name === 'Date' || name === 'Buffer') return name
  return 'json'
}

/**
 * @module
 * Loads the configuration: defaults < file (`skein.config.json`, else
 * `.skein/config.json`, in the working dir) < environment (`SKEIN_*`) <
 * flags. Validated by one zod schema; errors name the key and its source.
 */
import { readFileSync, statSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { Config, type ConfigInput } from '../../schemas/config.ts';
import { RuntimeError } from '../../schemas/errors.ts';
import { defaultDataDir } from './data-dir.ts';

export class ConfigError extends RuntimeError {
  override name = 'ConfigError';
  constructor(message: string) {
    super('invalid_config', message);
  }
}

export const CONFIG_FILES = ['skein.config.json', join('.skein', 'config.json')];

/**
 * Whether `path` is a config file: a regular file (or a link to one). Not a directory: while a sandboxed terminal
 * is open in a workspace without `skein.config.json`, an empty directory of that name stands in for it, so that
 * the agent cannot create it (actors/terminal/pty-spawn.ts); the file after it then counts, as if it were absent.
 */
export function isConfigFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** Environment variables and the key each sets. */
export const ENV_KEYS: Record<string, keyof ConfigInput> = {
  SKEIN_NATS_URL: 'natsUrl',
  SKEIN_LOG_LEVEL: 'logLevel',
  SKEIN_DATA: 'dataDir',
  SKEIN_WORKSPACE: 'workspace',
  SKEIN_ROOT_AGENT: 'rootAgentId',
  SKEIN_MODE: 'mode',
  SKEIN_HOST: 'host',
};

export type LoadedConfig = Config & {
  dataDir: string;
  workspace: string;
  configFile: string | undefined;
  /** Whether the file, env or flags set the data dir / workspace (false: derived from the working dir). */
  explicit: { dataDir: boolean; workspace: boolean; rootAgentId: boolean };
  /** Where `domains` came from, for its errors: a flag, the config file, or nothing (defaults). */
  domainsFrom?: string;
};

export function loadConfig(
  options: { cwd?: string; flags?: Partial<ConfigInput>; env?: NodeJS.ProcessEnv; file?: string } = {},
): LoadedConfig {
  const cwd = options.cwd ?? process.cwd();
  const env = options.env ?? process.env;
  const file = options.file ?? CONFIG_FILES.map((f) => join(cwd, f)).find(isConfigFile);
  let fromFile: Record<string, unknown> = {};
  if (file) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      throw new ConfigError(`cannot read config file ${file}: ${(err as Error).message}`);
    }
    try {
      const parsed: unknown = JSON.parse(text);
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('expected a JSON object');
      fromFile = parsed as Record<string, unknown>;
    } catch (err) {
      throw new ConfigError(`config file ${file} is not a JSON object (${(err as Error).message}); fix its syntax`);
    }
  }
  const fromEnv: Record<string, unknown> = {};
  for (const [name, key] of Object.entries(ENV_KEYS)) {
    if (env[name] !== undefined && env[name] !== '') fromEnv[key] = env[name];
  }
  const flags = Object.fromEntries(Object.entries(options.flags ?? {}).filter(([, v]) => v !== undefined));
  const merged = { ...fromFile, ...fromEnv, ...flags };
  const parsed = Config.safeParse(merged);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const key =
        issue.path.map(String).join('.') || (issue.code === 'unrecognized_keys' ? issue.keys.join(', ') : '(root)');
      const top = String(issue.path[0] ?? (issue.code === 'unrecognized_keys' ? issue.keys[0] : ''));
      const source =
        top in flags
          ? 'a flag'
          : Object.values(ENV_KEYS).includes(top as keyof ConfigInput) && top in fromEnv
            ? 'the environment'
            : (file ?? 'defaults');
      return `config key '${key}' (from ${source}): ${issue.message}`;
    });
    throw new ConfigError(`${problems.join('; ')}. Fix the value or remove the key; see README "Configuration".`);
  }
  const config = parsed.data;
  const workspace = resolve(cwd, config.workspace ?? '.');
  return {
    ...config,
    dataDir:
      config.dataDir === undefined
        ? defaultDataDir(workspace, env)
        : isAbsolute(config.dataDir)
          ? config.dataDir
          : resolve(cwd, config.dataDir),
    workspace,
    configFile: file,
    domainsFrom: 'domains' in flags ? 'a flag' : 'domains' in fromFile ? file : undefined,
    explicit: {
      dataDir: config.dataDir !== undefined,
      workspace: config.workspace !== undefined,
      rootAgentId: 'rootAgentId' in merged,
    },
  };
}

/** Domain sections of the config (`domains.<name>`): each validated by its domain's schema. */
export const DOMAIN_SECTIONS = ['agents', 'terminal', 'edit', 'permission', 'review'] as const;

/**
 * Parses `domains.<name>` with the domain's schema; errors name the key
 * (`domains.terminal.maxPerAgent`) and say where it came from.
 */
export function domainConfig<T>(
  config: LoadedConfig,
  name: (typeof DOMAIN_SECTIONS)[number],
  schema: import('zod').ZodType<T>,
): T {
  for (const key of Object.keys(config.domains)) {
    if (!(DOMAIN_SECTIONS as readonly string[]).includes(key)) {
      throw new ConfigError(`config key 'domains.${key}' is not a domain; use one of ${DOMAIN_SECTIONS.join(', ')}`);
    }
  }
  const parsed = schema.safeParse(config.domains[name] ?? {});
  if (!parsed.success) {
    const problems = parsed.error.issues.map(
      (i) =>
        `config key 'domains.${[name, ...i.path.map(String)].join('.')}' ` +
        `(from ${config.domainsFrom ?? config.configFile ?? 'defaults'}): ${i.message}`,
    );
    throw new ConfigError(`${problems.join('; ')}. Fix the value or remove the key.`);
  }
  return parsed.data;
}

// `npm test` runs this first (pretest): the integration tests need a real nats-server and bubblewrap.
// Installs them from Debian's packages when missing and we may (root, apt-get present); otherwise says how.
import { spawnSync } from 'node:child_process';

const need = [
  ['nats-server', 'nats-server'],
  ['bwrap', 'bubblewrap'],
].filter(([bin]) => spawnSync('sh', ['-c', `command -v ${bin}`], { stdio: 'ignore' }).status !== 0);

if (need.length > 0) {
  const packages = need.map(([, pkg]) => pkg);
  const canInstall =
    process.getuid?.() === 0 && spawnSync('sh', ['-c', 'command -v apt-get'], { stdio: 'ignore' }).status === 0;
  if (!canInstall) {
    process.stderr.write(
      `skein tests need ${packages.join(' and ')}: install with \`sudo apt-get install -y ${packages.join(' ')}\`\n`,
    );
    process.exit(1);
  }
  process.stderr.write(`installing ${packages.join(', ')} (apt-get)\n`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [
    ['update', '-qq'],
    ['install', '-y', '-qq', ...packages],
  ]) {
    const r = spawnSync('apt-get', args, { stdio: 'inherit', env });
    if (r.status !== 0) process.exit(r.status ?? 1);
  }
}

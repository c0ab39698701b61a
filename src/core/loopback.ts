/**
 * Which interfaces reach only this machine: servers bound to one of them refuse requests naming a
 * host elsewhere (DNS rebinding). Pure string checks; this file must never open a socket.
 */

/** Host names a request to a loopback-bound server may carry (IPv6 with or without brackets). */
export const LOOPBACK_NAMES: ReadonlySet<string> = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

/** Whether listening on `host` reaches only this machine: 127.0.0.0/8 (also IPv4-mapped), ::1, localhost. */
export function isLoopbackInterface(host: string): boolean {
  const address = host.toLowerCase().replace(/^::ffff:/, '');
  return LOOPBACK_NAMES.has(address) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(address) || /^(0{1,4}:){7}0{0,3}1$/.test(address);
}

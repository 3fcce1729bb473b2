/* TEMPORARY: stubs until pico_net.c, pico_tls.c, pico_clock.c and the peripheral files exist.
 * Whoever implements a function deletes it here. */
#include "pico_port.h"
#include "sdk_port.h"

bool pico_net_init(const sdk_config *config) { (void)config; return true; }
void pico_net_link_down(void) {}
void sdk_pico_clock_set(unsigned long long seconds, unsigned long microseconds) { (void)seconds; (void)microseconds; }
bool pico_clock_known(void) { return false; }
bool sdk_port_net_open(const char *host, uint16_t port, bool tls) { (void)host; (void)port; (void)tls; return false; }
sdk_net_status sdk_port_net_status(void) { return SDK_NET_FAILED; }
long sdk_port_net_send(const uint8_t *data, size_t len) { (void)data; (void)len; return -1; }
long sdk_port_net_recv(uint8_t *out, size_t cap) { (void)out; (void)cap; return -1; }
void sdk_port_net_close(void) {}

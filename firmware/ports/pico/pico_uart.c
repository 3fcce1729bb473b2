/*
 * UARTs on the Pico. Received bytes are moved by the UART interrupt from the 32-byte hardware FIFO
 * into a ring per UART (one producer, the interrupt; one consumer, sdk_port_uart_read from the
 * core's poll), so nothing is lost while the loop is busy with the network for a while.
 */
#include "hardware/gpio.h"
#include "hardware/irq.h"
#include "hardware/sync.h"
#include "hardware/uart.h"
#include "hardware/watchdog.h"
#include "pico_pins.h"
#include "sdk_port.h"

#define RX_RING 4096u /* a power of two: 0.36 s at 115200 baud, 44 ms at 921600 */
#define TX_CHUNK 32u  /* the watchdog is fed between chunks: at 300 baud one takes about 1 s */

typedef struct {
  uint8_t data[RX_RING];
  volatile uint32_t head; /* written by the interrupt only */
  volatile uint32_t tail; /* written by the main loop only */
  volatile uint32_t lost; /* bytes that found the ring full or the hardware FIFO overrun */
  uint32_t lost_reported;
  bool handler_set;
} rx_ring;

static rx_ring rings[2];

static uart_inst_t *uart_of(uint8_t n) { return n == 0 ? uart0 : n == 1 ? uart1 : NULL; }

static void drain_fifo(uart_inst_t *uart, rx_ring *r) {
  uint32_t head = r->head;
  while (uart_is_readable(uart)) {
    uint32_t dr = uart_get_hw(uart)->dr;
    if (dr & UART_UARTDR_OE_BITS) r->lost++;
    if (head - r->tail >= RX_RING) {
      r->lost++;
      continue;
    }
    r->data[head % RX_RING] = (uint8_t)(dr & 0xffu);
    head++;
  }
  __dmb(); /* the bytes are stored before the consumer can see them */
  r->head = head;
  pico_wake_main_loop();
}

static void on_uart0(void) { drain_fifo(uart0, &rings[0]); }
static void on_uart1(void) { drain_fifo(uart1, &rings[1]); }

void sdk_port_uart_configure(uint8_t n, uint8_t tx, uint8_t rx, uint32_t baud, uint8_t data_bits, uint8_t parity,
                             uint8_t stop_bits) {
  uart_inst_t *uart = uart_of(n);
  if (!uart || baud == 0) return;
  rx_ring *r = &rings[n];
  uint irq = UART_IRQ_NUM(uart);
  irq_set_enabled(irq, false);
  uart_deinit(uart);
  pico_pins_release(PICO_PIN_UART, n);
  r->head = 0;
  r->tail = 0;
  (void)uart_init(uart, baud);
  uart_set_format(uart, data_bits, stop_bits,
                  parity == 1 ? UART_PARITY_EVEN : parity == 2 ? UART_PARITY_ODD : UART_PARITY_NONE);
  uart_set_hw_flow(uart, false, false);
  uart_set_fifo_enabled(uart, true);
  (void)pico_pin_take(tx, PICO_PIN_UART, n);
  gpio_set_function(tx, UART_FUNCSEL_NUM(uart, tx));
  (void)pico_pin_take(rx, PICO_PIN_UART, n);
  gpio_set_function(rx, UART_FUNCSEL_NUM(uart, rx));
  if (!r->handler_set) {
    irq_set_exclusive_handler(irq, n == 0 ? on_uart0 : on_uart1);
    r->handler_set = true;
  }
  uart_set_irqs_enabled(uart, true, false);
  irq_set_enabled(irq, true);
}

void sdk_port_uart_write(uint8_t n, const uint8_t *data, size_t len) {
  uart_inst_t *uart = uart_of(n);
  if (!uart) return;
  for (size_t off = 0; off < len; off += TX_CHUNK) {
    watchdog_update();
    uart_write_blocking(uart, data + off, len - off < TX_CHUNK ? len - off : TX_CHUNK);
  }
}

size_t sdk_port_uart_read(uint8_t n, uint8_t *out, size_t cap) {
  if (n > 1) return 0;
  rx_ring *r = &rings[n];
  uint32_t lost = r->lost;
  if (lost != r->lost_reported) {
    r->lost_reported = lost;
    sdk_port_log(SDK_LOG_WARN, n == 0 ? "UART0 received bytes faster than they were read; some were lost"
                                      : "UART1 received bytes faster than they were read; some were lost");
  }
  uint32_t tail = r->tail;
  uint32_t head = r->head;
  __dmb(); /* the bytes are read only after head said they are there */
  size_t count = 0;
  while (tail != head && count < cap) out[count++] = r->data[tail++ % RX_RING];
  __dmb(); /* read before the interrupt may reuse the space */
  r->tail = tail;
  return count;
}

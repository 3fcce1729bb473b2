/*
 * GPIO on the Pico: pin modes, levels, the onboard LED (on the wireless chip), and watched pins.
 * An edge interrupt only queues (pin, level) in a ring; pico_peripherals_poll hands the queue to the
 * core, which filters edges and debounces.
 */
#include "hardware/gpio.h"
#include "hardware/sync.h"
#include "pico/cyw43_arch.h"
#include "pico_pins.h"
#include "pico_port.h"
#include "sdk_port.h"

#define EDGE_MASK (GPIO_IRQ_EDGE_RISE | GPIO_IRQ_EDGE_FALL)
#define RING_SIZE 128u /* a power of two; the loop drains it at least every 100 ms */

typedef struct {
  uint8_t pin;
  uint8_t level;
} edge_record;

/* One producer (the IO_BANK0 interrupt) and one consumer (the main loop): the producer writes
 * only head and the slot, the consumer only tail. */
static edge_record ring[RING_SIZE];
static volatile uint32_t ring_head;
static volatile uint32_t ring_tail;
static volatile uint32_t ring_overflows;
static uint32_t overflows_seen;

static sdk_device *device;
static volatile uint32_t watched; /* bit per pin; read by the interrupt */
static uint8_t led_level;
static async_when_pending_worker_t wake_worker;

static void wake_noop(async_context_t *context, async_when_pending_worker_t *worker) {
  (void)context;
  (void)worker;
}

void pico_wake_main_loop(void) { async_context_set_work_pending(cyw43_arch_async_context(), &wake_worker); }

static void push_edge(uint8_t pin, uint8_t level) {
  uint32_t head = ring_head;
  if (head - ring_tail >= RING_SIZE) {
    ring_overflows++;
    return;
  }
  ring[head % RING_SIZE] = (edge_record){.pin = pin, .level = level};
  __dmb(); /* the slot is written before the consumer can see it */
  ring_head = head + 1u;
}

static void on_edge(uint gpio, uint32_t events) {
  if (gpio >= PICO_PIN_COUNT || !(watched & (1u << gpio)) || !(events & EDGE_MASK)) return;
  uint8_t now = gpio_get(gpio) ? 1 : 0;
  /* Both edges since the last interrupt: a pulse shorter than the interrupt latency. The core
   * sees it as two changes ending at the level the pin has now. */
  if ((events & EDGE_MASK) == EDGE_MASK) push_edge((uint8_t)gpio, (uint8_t)!now);
  else now = (events & GPIO_IRQ_EDGE_RISE) ? 1 : 0;
  push_edge((uint8_t)gpio, now);
  pico_wake_main_loop();
}

static bool is_pin(uint8_t pin) { return pin < PICO_PIN_COUNT; }

void pico_gpio_leave(uint8_t pin) {
  if (watched & (1u << pin)) gpio_set_irq_enabled(pin, EDGE_MASK, false);
}

/* The edge interrupt also sees a watched output's own writes: the pad's input buffer stays on
 * (gpio_set_function sets IE), so gpio_write needs no report of its own. */
void pico_gpio_enter(uint8_t pin) {
  if (watched & (1u << pin)) gpio_set_irq_enabled_with_callback(pin, EDGE_MASK, true, on_edge);
}

/* The pin as a plain GPIO, set up as an input if it did something else before. */
static void make_gpio(uint8_t pin) {
  if (pico_pin_take(pin, PICO_PIN_GPIO, 0) == PICO_PIN_GPIO) return;
  gpio_init(pin);
  pico_gpio_enter(pin);
}

void pico_peripherals_init(sdk_device *dev) {
  device = dev;
  wake_worker.do_work = wake_noop;
  (void)async_context_add_when_pending_worker(cyw43_arch_async_context(), &wake_worker);
  led_level = 0;
  cyw43_arch_gpio_put(CYW43_WL_GPIO_LED_PIN, false);
}

void pico_peripherals_poll(void) {
  uint32_t tail = ring_tail;
  while (tail != ring_head) {
    __dmb(); /* the slot is read only after head said it is filled */
    edge_record e = ring[tail % RING_SIZE];
    __dmb(); /* the slot is read before the producer may reuse it */
    ring_tail = ++tail;
    if (device) sdk_device_pin_changed(device, e.pin, e.level);
  }
  uint32_t overflows = ring_overflows;
  if (overflows != overflows_seen) {
    overflows_seen = overflows;
    sdk_port_log(SDK_LOG_WARN, "GPIO edges came faster than they could be queued; some were lost");
    /* Whatever was lost, the core ends up with every watched pin's present level. */
    for (uint8_t pin = 0; pin < PICO_PIN_COUNT; pin++)
      if ((watched & (1u << pin)) && pico_pin_role_of(pin) == PICO_PIN_GPIO && device)
        sdk_device_pin_changed(device, pin, gpio_get(pin) ? 1 : 0);
  }
}

void sdk_port_gpio_mode(uint8_t pin, bool output, uint8_t pull) {
  if (!is_pin(pin)) return; /* the LED is an output already (the core refuses it as an input) */
  make_gpio(pin);
  gpio_set_pulls(pin, pull == SDK_PULL_UP, pull == SDK_PULL_DOWN);
  gpio_set_dir(pin, output);
}

void sdk_port_gpio_write(uint8_t pin, uint8_t level) {
  bool value = level != 0;
  if (pin == SDK_PIN_LED) {
    cyw43_arch_gpio_put(CYW43_WL_GPIO_LED_PIN, value);
    led_level = value ? 1 : 0;
    return;
  }
  if (!is_pin(pin)) return;
  make_gpio(pin);
  gpio_put(pin, value); /* the latch first: no glitch when the pin turns into an output */
  gpio_set_dir(pin, GPIO_OUT);
}

uint8_t sdk_port_gpio_read(uint8_t pin) {
  if (pin == SDK_PIN_LED) return led_level;
  if (!is_pin(pin)) return 0;
  pico_pin_role role = pico_pin_role_of(pin);
  /* A never-used pin is an isolated pad on the RP2350 (and has no function on the RP2040), and an
   * analog input has its digital input buffer off: make it a digital input first. */
  if (role == PICO_PIN_UNUSED || role == PICO_PIN_ADC) make_gpio(pin);
  if (role == PICO_PIN_GPIO && gpio_get_dir(pin) == GPIO_OUT) return gpio_get_out_level(pin) ? 1 : 0;
  return gpio_get(pin) ? 1 : 0;
}

void sdk_port_gpio_watch(uint8_t pin, bool enable) {
  if (!is_pin(pin)) return;
  uint32_t bit = 1u << pin;
  if (!enable) {
    if ((watched & bit) && pico_pin_role_of(pin) == PICO_PIN_GPIO) gpio_set_irq_enabled(pin, EDGE_MASK, false);
    watched &= ~bit;
    return;
  }
  if (watched & bit) return;
  watched |= bit;
  /* Only while the pin is a plain GPIO: a PWM or bus pin would interrupt at its clock rate. */
  pico_pin_role role = pico_pin_role_of(pin);
  if (role == PICO_PIN_UNUSED || role == PICO_PIN_ADC) make_gpio(pin);
  else if (role == PICO_PIN_GPIO) pico_gpio_enter(pin);
}

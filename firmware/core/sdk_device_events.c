/* Watched pins (edges, debouncing) and UART input, sent after the command that raised them. */
#include "sdk_device_parts.h"
#include "sdk_port.h"
#include "sdk_text.h"

static void settle(sdk_device *dev, uint8_t pin, uint8_t level) {
  sdk_pin_watch *watch = &dev->watch[pin];
  if (level == watch->stable) return;
  watch->stable = level;
  bool wanted = watch->edge == 3 || (watch->edge == 1 && level) || (watch->edge == 2 && !level);
  if (!wanted) return;
  if (dev->events_count == SDK_DEVICE_WATCH_QUEUE) {
    dev->events_head = (dev->events_head + 1) % SDK_DEVICE_WATCH_QUEUE;
    dev->events_count--;
    dev->events_dropped++;
  }
  size_t slot = (dev->events_head + dev->events_count) % SDK_DEVICE_WATCH_QUEUE;
  dev->events[slot].pin = pin;
  dev->events[slot].value = level;
  dev->events_count++;
}

void sdk_device_pin_changed(sdk_device *dev, uint8_t pin, uint8_t level) {
  if (pin >= 30 || dev->watch[pin].edge == 0) return;
  sdk_pin_watch *watch = &dev->watch[pin];
  watch->latest = level ? 1 : 0;
  if (watch->debounce_ms == 0) {
    settle(dev, pin, watch->latest);
  } else {
    watch->pending = true;
    watch->due_ms = sdk_port_now_ms() + watch->debounce_ms;
  }
}

void sdk_device_settle_debounced(sdk_device *dev, uint64_t now) {
  for (uint8_t pin = 0; pin < 30; pin++) {
    sdk_pin_watch *watch = &dev->watch[pin];
    if (watch->edge && watch->pending && now >= watch->due_ms) {
      watch->pending = false;
      settle(dev, pin, watch->latest);
    }
  }
}

/* Queues the next event message (gpio_change, then uart_rx); false when there is none. */
bool sdk_device_queue_next_event(sdk_device *dev) {
  sdk_json_writer w;
  if (dev->events_dropped > 0) {
    char message[96];
    sdk_text t;
    sdk_text_init(&t, message, sizeof message);
    sdk_text_int(&t, dev->events_dropped);
    sdk_text_add(&t, " gpio_change events were dropped: the queue was full");
    dev->events_dropped = 0;
    return sdk_device_log(dev, SDK_LOG_WARN, message);
  }
  if (dev->events_count > 0) {
    sdk_device_begin_frame(dev, &w);
    sdk_jw_begin_object(&w);
    sdk_jw_key(&w, "type");
    sdk_jw_string(&w, "gpio_change");
    sdk_jw_key(&w, "pin");
    sdk_jw_int(&w, dev->events[dev->events_head].pin);
    sdk_jw_key(&w, "value");
    sdk_jw_int(&w, dev->events[dev->events_head].value);
    sdk_jw_end_object(&w);
    dev->events_head = (dev->events_head + 1) % SDK_DEVICE_WATCH_QUEUE;
    dev->events_count--;
    return sdk_device_queue_json(dev, &w);
  }
  for (uint8_t uart = 0; uart < 2; uart++) {
    if (!dev->uart_ready[uart]) continue;
    size_t n = sdk_port_uart_read(uart, dev->scratch, SDK_DEVICE_UART_CHUNK);
    if (n == 0) continue;
    sdk_device_begin_frame(dev, &w);
    sdk_jw_begin_object(&w);
    sdk_jw_key(&w, "type");
    sdk_jw_string(&w, "uart_rx");
    sdk_jw_key(&w, "uart");
    sdk_jw_int(&w, uart);
    sdk_jw_key(&w, "data");
    sdk_jw_bytes(&w, dev->scratch, n);
    sdk_jw_end_object(&w);
    return sdk_device_queue_json(dev, &w);
  }
  return false;
}

/*
 * trim(): glibc's malloc_trim(0) on a libuv thread-pool thread, resolving to true when some
 * memory was released. malloc_trim returns the free memory of every malloc arena to the
 * kernel (the top of each heap by shrinking it, whole free pages inside it by
 * madvise(MADV_DONTNEED)); free() alone gives back only the top of a heap, so a Node process
 * whose sockets and Buffers churn medium-sized blocks keeps the holes they leave as resident
 * memory. It takes the arenas' locks, so other threads' malloc calls wait for it, but the
 * event loop does not (a trim that gives back 1 GiB takes some 200 ms). See
 * api/malloc-trim.ts for how k8ts uses it.
 */
#include <malloc.h>
#include <node_api.h>
#include <stdlib.h>

typedef struct {
  napi_async_work work;
  napi_deferred deferred;
  int released;
} Trim;

static void Execute(napi_env env, void *data) {
  (void)env;
  ((Trim *)data)->released = malloc_trim(0);
}

static void Complete(napi_env env, napi_status status, void *data) {
  Trim *t = data;
  napi_value released;
  napi_get_boolean(env, status == napi_ok && t->released != 0, &released);
  napi_resolve_deferred(env, t->deferred, released);
  napi_delete_async_work(env, t->work);
  free(t);
}

static napi_value StartTrim(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value promise, name;
  Trim *t = calloc(1, sizeof(Trim));
  if (t == NULL) {
    napi_throw_error(env, NULL, "malloc_trim: out of memory");
    return NULL;
  }
  if (napi_create_promise(env, &t->deferred, &promise) != napi_ok ||
      napi_create_string_utf8(env, "malloc_trim", NAPI_AUTO_LENGTH, &name) != napi_ok ||
      napi_create_async_work(env, NULL, name, Execute, Complete, t, &t->work) != napi_ok ||
      napi_queue_async_work(env, t->work) != napi_ok) {
    free(t);
    napi_throw_error(env, NULL, "malloc_trim: could not queue the work");
    return NULL;
  }
  return promise;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  if (napi_create_function(env, "trim", NAPI_AUTO_LENGTH, StartTrim, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "trim", fn) != napi_ok) return NULL;
  return exports;
}

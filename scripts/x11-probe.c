// Measures a desktop app from outside, the way a user sees it: polls a region of an X11 screen.
//
//   x11-probe photo X Y W H TIMEOUT_MS     ms until the region shows a colour photo (launch time)
//   x11-probe key KEY X Y W H TIMEOUT_MS    ms from a key press (XTest) until the region changes
//   x11-probe responder                     a window that repaints on every key (the probe's own
//                                           overhead: what "key" measures against an instant app)
//
// Build: cc -O2 -o x11-probe scripts/x11-probe.c -lX11 -l:libXtst.so.6
// Used by scripts/ui-latency.sh; not part of graylab itself.
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

// libXtst without its development headers.
extern int XTestFakeKeyEvent(Display *, unsigned int, Bool, unsigned long);
extern int XTestFakeMotionEvent(Display *, int, int, int, unsigned long);

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

// FNV-1a of the region's pixels, and the share of colourful pixels in it.
static unsigned long long region(Display *d, int x, int y, int w, int h, double *colourful) {
    XImage *img = XGetImage(d, DefaultRootWindow(d), x, y, w, h, AllPlanes, ZPixmap);
    if (!img) {
        *colourful = 0;
        return 0;
    }
    unsigned long long hash = 1469598103934665603ULL;
    long vivid = 0;
    for (int j = 0; j < h; j++) {
        for (int i = 0; i < w; i++) {
            unsigned long p = XGetPixel(img, i, j);
            int r = (p >> 16) & 255, g = (p >> 8) & 255, b = p & 255;
            int hi = r > g ? (r > b ? r : b) : (g > b ? g : b);
            int lo = r < g ? (r < b ? r : b) : (g < b ? g : b);
            vivid += hi - lo > 40;
            hash = (hash ^ p) * 1099511628211ULL;
        }
    }
    XDestroyImage(img);
    *colourful = (double)vivid / ((double)w * h);
    return hash;
}

static int responder(Display *d) {
    Window win = XCreateSimpleWindow(d, DefaultRootWindow(d), 0, 0, 400, 300, 0, 0, 0x202020);
    XSelectInput(d, win, KeyPressMask | ExposureMask);
    XMapWindow(d, win);
    GC gc = XCreateGC(d, win, 0, NULL);
    unsigned long colours[2] = {0x202020, 0xe0e0e0};
    int which = 0;
    for (;;) {
        XEvent e;
        XNextEvent(d, &e);
        if (e.type == KeyPress) which ^= 1;
        XSetForeground(d, gc, colours[which]);
        XFillRectangle(d, win, gc, 0, 0, 400, 300);
        XFlush(d);
    }
}

int main(int argc, char **argv) {
    Display *d = XOpenDisplay(NULL);
    if (!d) {
        fprintf(stderr, "x11-probe: cannot open the display\n");
        return 2;
    }
    if (argc >= 2 && !strcmp(argv[1], "responder")) return responder(d);
    int key = argc >= 2 && !strcmp(argv[1], "key");
    if ((key && argc != 8) || (!key && (argc != 7 || strcmp(argv[1], "photo")))) {
        fprintf(stderr, "usage: x11-probe photo X Y W H TIMEOUT_MS | key KEY X Y W H TIMEOUT_MS | responder\n");
        return 2;
    }
    char **a = argv + 2 + key;
    int x = atoi(a[0]), y = atoi(a[1]), w = atoi(a[2]), h = atoi(a[3]);
    double timeout = atof(a[4]), colourful, start = now_ms();
    if (!key) {
        while (now_ms() - start < timeout) {
            region(d, x, y, w, h, &colourful);
            if (colourful > 0.2) {
                printf("%.0f\n", now_ms() - start);
                return 0;
            }
            usleep(2000);
        }
        printf("timeout\n");
        return 1;
    }
    KeyCode code = XKeysymToKeycode(d, XStringToKeysym(argv[2]));
    // Keys go to the window under the pointer (no window manager).
    XTestFakeMotionEvent(d, -1, x + w / 2, y + h / 2, 0);
    XSync(d, False);
    usleep(300000);
    unsigned long long before = region(d, x, y, w, h, &colourful);
    start = now_ms();
    XTestFakeKeyEvent(d, code, True, 0);
    XTestFakeKeyEvent(d, code, False, 0);
    XSync(d, False);
    while (now_ms() - start < timeout) {
        if (region(d, x, y, w, h, &colourful) != before) {
            printf("%.1f\n", now_ms() - start);
            return 0;
        }
        usleep(1000);
    }
    printf("timeout\n");
    return 1;
}

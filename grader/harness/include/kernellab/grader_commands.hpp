// How a speed program reads the grader's commands (kernellab/speed.hpp says what they are): a
// pipe, non-blocking, read whole lines at a time. Host code only, so the harness's own tests run it
// on any machine.
#pragma once

#include <cerrno>
#include <string>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

namespace kernellab {

/** The grader's commands from `descriptor`, which it makes non-blocking. */
class GraderCommands {
public:
    /** `spin`: wait for a command awake, spinning, as the grader says (`--wait spin`, on a machine
     *  of two CPUs or more). The grader's clock runs from the command's sending, so a wake-up from
     *  sleep would fall inside the window; the grader's clock waits the same way (clock.py). */
    GraderCommands(int descriptor, bool spin) : descriptor_(descriptor), spin_(spin) {
        const int flags = fcntl(descriptor, F_GETFL);
        open_ = flags != -1 && fcntl(descriptor, F_SETFL, flags | O_NONBLOCK) != -1;
    }

    /** Whether `descriptor` was an open file that could be made non-blocking. */
    bool open() const { return open_; }

    /** The next command, without its newline; "" once the grader has gone. Waited for as told
     *  (`spin`), since the grader's clock may be running. */
    std::string next() { return read(spin_); }

    /** The next command, waited for asleep: between passes no clock runs, and a program that spun
     *  there would take a core from whatever the grader times meanwhile. */
    std::string nextAsleep() { return read(false); }

private:
    std::string read(bool spin) {
        for (;;) {
            const size_t end = pending_.find('\n');
            if (end != std::string::npos) {
                std::string line = pending_.substr(0, end);
                pending_.erase(0, end + 1);
                return line;
            }
            char block[256];
            const ssize_t got = ::read(descriptor_, block, sizeof block);
            if (got > 0) {
                pending_.append(block, size_t(got));
            } else if (got == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
                return "";
            } else if (!spin) {
                pollfd readable{descriptor_, POLLIN, 0};
                ::poll(&readable, 1, -1);
            }
        }
    }

    int descriptor_;
    bool spin_;
    bool open_ = false;
    std::string pending_;
};

}  // namespace kernellab

// 10,000 calls from 8 threads through the C++ wrapper, mixing blocking
// execute, callback submit and polled submit, and tools that complete on the
// spot, by return value, or later from a worker thread (deferred Calls).
// Every call must get exactly one correct result, and every tool's captured
// state must be destroyed exactly once.
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "check.hpp"

using capstan::Call;
using capstan::Outcome;
using capstan::Result;

namespace {

constexpr int kThreads = 8;
constexpr int kCallsPerThread = 1250;  // 8 x 1250 = 10,000
constexpr int kBatch = 25;

/// Completes deferred Calls on two threads of its own.
class Workers {
public:
    Workers() {
        for (int i = 0; i < 2; i++) threads_.emplace_back([this] { loop(); });
    }
    ~Workers() {
        {
            std::lock_guard<std::mutex> lock(m_);
            stop_ = true;
        }
        cv_.notify_all();
        for (auto &t : threads_) t.join();
    }
    void post(Call c) {
        {
            std::lock_guard<std::mutex> lock(m_);
            queue_.push_back(std::move(c));
        }
        cv_.notify_one();
    }

private:
    void loop() {
        for (;;) {
            Call c;
            {
                std::unique_lock<std::mutex> lock(m_);
                cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
                if (queue_.empty()) return;
                c = std::move(queue_.front());
                queue_.pop_front();
            }
            CHECK(c.return_text(c.arguments()).has_value());
        }
    }
    std::mutex m_;
    std::condition_variable cv_;
    std::deque<Call> queue_;
    std::vector<std::thread> threads_;
    bool stop_ = false;
};

std::string one_call(int thread, int n, const char *tool) {
    return R"({"id":")" + std::to_string(thread) + "-" + std::to_string(n) + R"(","name":")" + tool +
           R"(","arguments":{"n":)" + std::to_string(n) + "}}";
}

const char *tool_for(int n) {
    switch (n % 3) {
    case 0: return "value";
    case 1: return "ref";
    default: return "deferred";
    }
}

bool result_ok(const Result &r, int thread, int n) {
    return r.outcome == Outcome::ok && r.id == std::to_string(thread) + "-" + std::to_string(n) &&
           r.content == R"({"n":)" + std::to_string(n) + "}";
}

}  // namespace

static void ten_thousand_calls_from_eight_threads_each_get_one_result() {
    std::atomic<int> live{0}, twice{0};
    std::atomic<int> ran{0}, good{0};
    {
        Workers workers;
        capstan::Registry reg;
        check::Probe probe(live, twice);
        reg.add({"value", "", ""}, [probe, &ran](std::string_view args) {
            ran++;
            return std::string(args);
        });
        reg.add({"ref", "", ""}, [probe, &ran](Call &c) {
            ran++;
            (void)c.return_text(c.arguments());
        });
        reg.add({"deferred", "", ""}, [probe, &ran, &workers](Call c) {
            ran++;
            workers.post(std::move(c));
        });

        std::vector<std::thread> threads;
        for (int t = 0; t < kThreads; t++) {
            threads.emplace_back([&, t] {
                int n = 0;
                while (n < kCallsPerThread) {
                    switch ((n / kBatch) % 3) {
                    case 0: {  // single blocking executes
                        for (int i = 0; i < kBatch; i++, n++) {
                            auto r = reg.execute(one_call(t, n, tool_for(n)));
                            good += r.size() == 1 && result_ok(r[0], t, n);
                        }
                        break;
                    }
                    case 1: {  // one batch, results by callback
                        std::string calls = "[";
                        const int first = n;
                        for (int i = 0; i < kBatch; i++, n++) calls += (i ? "," : "") + one_call(t, n, tool_for(n));
                        calls += "]";
                        std::atomic<int> batch_good{0};
                        capstan::Batch b = reg.submit(calls, [&, first](const Result &r) {
                            batch_good += result_ok(r, t, first + static_cast<int>(r.index));
                        });
                        CHECK(b.wait(60000));
                        good += batch_good.load();
                        break;
                    }
                    default: {  // one batch, polled
                        std::string calls = "[";
                        const int first = n;
                        for (int i = 0; i < kBatch; i++, n++) calls += (i ? "," : "") + one_call(t, n, tool_for(n));
                        calls += "]";
                        capstan::Batch b = reg.submit_polled(calls);
                        while (!b.drained()) {
                            b.poll([&](const Result &r) { good += result_ok(r, t, first + static_cast<int>(r.index)); });
                            if (!b.drained()) b.wait(10);
                        }
                        break;
                    }
                    }
                }
            });
        }
        for (auto &th : threads) th.join();
        CHECK(live.load() == 4);  // the local probe and one per tool
    }
    CHECK(ran.load() == kThreads * kCallsPerThread);
    CHECK(good.load() == kThreads * kCallsPerThread);
    CHECK(live.load() == 0);
    CHECK(twice.load() == 0);
}

int main() {
    check::watchdog(300);
    ten_thousand_calls_from_eight_threads_each_get_one_result();
    return check::report("test_threads");
}

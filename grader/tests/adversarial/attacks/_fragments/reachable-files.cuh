// Every file reachable from five folders above the run's own (with nothing confining the run,
// a batch's work and report folders), for attacks on the grader's files.
template<class Visit>
void forEachReachableFile(Visit visit) {
    namespace fs = std::filesystem;
    std::error_code error;
    fs::path top = fs::current_path(error);
    for (int up = 0; up < 5 && top.has_parent_path(); up++) { top = top.parent_path(); }
    std::vector<fs::path> found{top};
    for (fs::recursive_directory_iterator it(top, fs::directory_options::skip_permission_denied, error), end;
         !error && it != end; it.increment(error)) {
        found.push_back(it->path());
    }
    for (const fs::path& path : found) { visit(path); }
}

#include <stdio.h>
#include <editline/readline.h>

/* Completion set-up without Swift touching libedit's mutable globals (Swift 6 refuses
   shared mutable state): the hook, the characters that end a word, no space appended. */
static inline void ceditline_set_completion(rl_completion_func_t *hook, const char *word_breaks) {
    rl_attempted_completion_function = hook;
    rl_basic_word_break_characters = word_breaks;
    rl_completer_word_break_characters = (char *)word_breaks;
    rl_completion_append_character = '\0';
}

/* Inside the hook: no filename completion when the hook found nothing. */
static inline void ceditline_completion_over(void) { rl_attempted_completion_over = 1; }

/* The line being edited and the cursor's byte offset in it. */
static inline const char *ceditline_line_buffer(void) { return rl_line_buffer; }
static inline int ceditline_point(void) { return rl_point; }

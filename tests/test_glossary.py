"""The glossary a translation is told its terms from."""

from coursetutor.tutor import glossary
from coursetutor.tutor.glossary import dropped, found, instruction, renderings


def test_every_term_has_english_and_the_languages_the_bundled_model_translates_worst() -> None:
    for term in glossary._terms():
        assert {"en", "it", "zh", "ko"} <= set(term), term


def test_the_terms_of_a_korean_translation_are_told_in_textbook_korean() -> None:
    told = renderings("the Hessian must be positive definite so that the Newton-Raphson "
                      "direction is a descent direction", "en", "ko")
    assert told == [("Hessian", "헤세 행렬"), ("positive definite", "양의 정부호"),
                    ("Newton-Raphson", "뉴턴-랩슨 방법"), ("descent direction", "하강 방향")]
    assert renderings("单调有界数列必收敛", "zh", "ko") == [
        ("单调", "단조"), ("有界", "유계"), ("数列", "수열"), ("收敛", "수렴")]


def test_a_longer_term_hides_the_shorter_ones_in_it() -> None:
    assert [s for s, _ in found("Newton-Raphson converges quadratically", "en")] == [
        "Newton-Raphson", "converges quadratically"]
    assert [s for s, _ in found("拟牛顿法不需要黑塞矩阵", "zh")] == ["拟牛顿法", "黑塞矩阵"]
    assert [s for s, _ in found("若数列有上界", "zh")] == ["数列", "有上界"]


def test_words_are_found_whole_and_in_any_case() -> None:
    assert found("Convergence of the series", "en")[0][0] == "Convergence"
    assert not found("a reconvergent path", "en")
    assert found("positive-definite Hessian", "en")[0][0] == "positive-definite"


def test_a_single_cjk_character_is_written_but_never_looked_for() -> None:
    assert not found("凸", "zh")  # part of too many words
    assert ("convex", "凸") in renderings("a convex set", "en", "zh")


def test_into_a_language_of_latin_letters_only_the_first_form_is_told() -> None:
    # a verb told as the noun would be written as the noun
    assert renderings("the method converges", "en", "it") == []
    assert renderings("the convergence of the method", "en", "it") == [
        ("convergence", "convergenza")]
    assert renderings("the method converges", "en", "ko") == [("converges", "수렴")]


def test_nothing_is_told_within_a_language_or_from_an_unknown_one() -> None:
    assert renderings("the method converges", "en", "en") == []
    assert renderings("the method converges", "", "ko") == []
    assert instruction([]) == ""
    assert instruction([("converges", "수렴")]).endswith("converges → 수렴.")


def test_a_term_the_text_already_spells_as_the_target_does_is_not_told() -> None:
    assert renderings("fine-tuning the model", "en", "it") == []  # Italian says fine-tuning


def test_a_question_s_translation_is_given_the_words_not_told_to_translate_them() -> None:
    # told "Translate these terms …" inside the question's prompt, the model answered it
    pairs = [("상합", "somma superiore")]
    assert instruction(pairs, glossary.FOR_QUESTION) == (
        "Words to use in the translation: 상합 → somma superiore.")


def test_a_term_the_translation_left_out_is_named() -> None:
    question = "감쇠 뉴턴-랩슨 방법에서 스텝 크기는 어떤 조건을 만족해야 하나요?"
    lossy = "What is the condition for the step size in the Newton-Raphson method?"
    assert dropped(lossy, question, "ko", "en") == ["damped"]
    assert dropped("In damped Newton-Raphson, what must the step size satisfy?", question,
                   "ko", "en") == []
    assert dropped(lossy, question, "en", "en") == []  # nothing was translated


def test_the_names_of_optimisation_methods_and_their_terms_are_told() -> None:
    # the Chinese translation of a Gauss-Newton hint named gradient descent (梯度下降法), the
    # Korean one wrote the empirical risk as 임상적 ("clinical")
    told = renderings("Gauss-Newton applies since the empirical risk is the squared sum of "
                      "the residuals", "en", "ko")
    assert told == [("Gauss-Newton", "가우스-뉴턴 방법"), ("empirical risk", "경험적 위험"),
                    ("squared sum", "제곱합"), ("residuals", "잔차")]
    assert renderings("Gauss-Newton applies", "en", "zh") == [("Gauss-Newton", "高斯-牛顿法")]


def test_a_name_is_kept_in_a_translation_as_written_or_as_its_textbook_term() -> None:
    from coursetutor.tutor.reply_language import keeps_terms

    hint = "The Gauss-Newton method fits here: R is a squared sum of residuals [1]."
    assert keeps_terms(hint, "高斯-牛顿法适用于这里：R 是残差的平方和 [1]。")
    assert keeps_terms(hint, "Gauss-Newton 方法适用于这里 [1]。")
    # another method's name
    assert not keeps_terms(hint, "梯度下降法适用于这里：R 是残差的平方和 [1]。")
    assert not keeps_terms("The Hessian must be positive definite.",
                           "허스턴은 양의 정부호여야 합니다.")

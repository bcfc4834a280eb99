"""The words that open a purpose clause, one table for `tried`'s two readers of an idea: the experiment model
(`kb/experiment.py`: what follows is no knob turned) and the word rules (`kb/search.py`: its words weigh as everyday
words). Data only, so importing it costs nothing."""

# The words that open a purpose clause ("... so the kernels load", "... to get more shared memory", "... in order to"):
# what the clause says is what the change is for, not a change
PURPOSE_OPENER = (r"so(?: that)?(?! (?:far|much|many|long|often)\b)|in order to|because|to (?:avoid|prevent|stop|keep|"
                  r"ensure|make sure|see (?:if|whether|which)|check (?:if|whether)|get (?:rid of|around|past|more)|"
                  r"work around|rule out|fix|solve|resolve|address|let|allow|force|match|load|pick up|free|save|"
                  r"speed up|unblock|silence|suppress|recover|identify|find (?:out|which))")
